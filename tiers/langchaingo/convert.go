package langchaingo

import (
	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// roleOf returns the conversation role a langchaingo message is stored
// with: human is user, ai is assistant, system and tool are themselves.
// Other types (generic, function) and a nil message are
// memory.ErrInvalidArgument.
func roleOf(msg llms.ChatMessage) (memory.Role, error) {
	if msg == nil {
		return "", memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the message is nil")
	}
	switch t := msg.GetType(); t {
	case llms.ChatMessageTypeHuman:
		return memory.RoleUser, nil
	case llms.ChatMessageTypeAI:
		return memory.RoleAssistant, nil
	case llms.ChatMessageTypeSystem:
		return memory.RoleSystem, nil
	case llms.ChatMessageTypeTool:
		return memory.RoleTool, nil
	default:
		return "", memory.Errorf(memory.ErrInvalidArgument,
			"langchaingo: a %q message has no conversation role: store human, ai, system or tool messages", string(t))
	}
}

// message returns a stored turn as a langchaingo message: user is human,
// assistant is ai, system and tool are themselves. A turn with another
// label (which a store refuses to write) is a generic message with that
// role, so a read never fails on it.
func message(t memory.Record) llms.ChatMessage {
	switch memory.Role(t.Label) {
	case memory.RoleUser:
		return llms.HumanChatMessage{Content: t.Content}
	case memory.RoleAssistant:
		return llms.AIChatMessage{Content: t.Content}
	case memory.RoleSystem:
		return llms.SystemChatMessage{Content: t.Content}
	case memory.RoleTool:
		return llms.ToolChatMessage{Content: t.Content}
	default:
		return llms.GenericChatMessage{Role: t.Label, Content: t.Content, Name: t.Metadata[memory.SpeakerKey]}
	}
}

// messages returns turns as langchaingo messages, in order.
func messages(turns []memory.Record) []llms.ChatMessage {
	out := make([]llms.ChatMessage, len(turns))
	for i, t := range turns {
		out[i] = message(t)
	}
	return out
}

// checkBinding checks what every adapter needs of the memory and the
// identity it is bound to: a memory, a valid identity and, when session
// is true, a session (turns are stored in one).
func checkBinding(mem tiered.Interface, id memory.Identity, what string, session bool) error {
	if mem == nil {
		return memory.Errorf(memory.ErrInvalidArgument, "langchaingo: %s needs a tiered memory", what)
	}
	if err := id.Validate(); err != nil {
		return err
	}
	if session && id.Session == "" {
		return memory.Errorf(memory.ErrIncompleteScope, "langchaingo: %s needs an identity with a session: turns are stored in one", what)
	}
	return nil
}
