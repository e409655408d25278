package langchaingo

import (
	"context"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// HistoryOptions configure a ChatMessageHistory. The zero value is the
// documented default.
type HistoryOptions struct {
	// Budget is the tokens of the window Messages returns
	// (tiered.Interface.Window); zero means the tiered memory's window
	// budget.
	Budget int
}

// ChatMessageHistory is a langchaingo schema.ChatMessageHistory over the
// short-term window of one session: the turns not yet folded into its
// digest, within a token budget. It is safe for concurrent use as far as
// its tiered.Interface is.
type ChatMessageHistory struct {
	mem tiered.Interface
	id  memory.Identity
	opt HistoryOptions
}

// NewChatMessageHistory returns the chat history of id's session in mem. id
// is the identity the host program verified for the session; it must have a
// session (memory.ErrIncompleteScope otherwise) and be valid. A nil mem or a
// negative budget is memory.ErrInvalidArgument.
func NewChatMessageHistory(mem tiered.Interface, id memory.Identity, opt HistoryOptions) (*ChatMessageHistory, error) {
	if err := checkBinding(mem, id, "the langchaingo chat history", true); err != nil {
		return nil, err
	}
	if opt.Budget < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the history's budget %d is negative", opt.Budget)
	}
	return &ChatMessageHistory{mem: mem, id: id, opt: opt}, nil
}

// AddMessage appends message to the session as a turn: a human message is
// the user's, an ai message the assistant's, system and tool messages are
// themselves (a message's tool calls and ids are not kept). Other message
// types, a nil message and a message the memory refuses (blank, not UTF-8,
// over memory.MaxContentBytes) are memory.ErrInvalidArgument or
// memory.ErrTooLarge, and nothing is stored.
func (h *ChatMessageHistory) AddMessage(ctx context.Context, message llms.ChatMessage) error {
	t, err := turnOf(h.id, message)
	if err != nil {
		return err
	}
	_, err = h.mem.Append(ctx, h.id, t)
	return err
}

// AddUserMessage appends text as the user's turn.
func (h *ChatMessageHistory) AddUserMessage(ctx context.Context, text string) error {
	return h.AddMessage(ctx, llms.HumanChatMessage{Content: text})
}

// AddAIMessage appends text as the assistant's turn.
func (h *ChatMessageHistory) AddAIMessage(ctx context.Context, text string) error {
	return h.AddMessage(ctx, llms.AIChatMessage{Content: text})
}

// Messages returns the session's window, oldest first, as langchaingo
// messages: user turns as human messages, assistant turns as ai messages,
// system and tool turns as themselves. Turns already folded into the
// session's digest, or older than the budget allows, are not in it (see
// tiered.Memory.Window): it is the short-term window, not every turn
// ever said.
func (h *ChatMessageHistory) Messages(ctx context.Context) ([]llms.ChatMessage, error) {
	turns, err := h.mem.Window(ctx, h.id, h.opt.Budget)
	if err != nil {
		return nil, err
	}
	return messages(turns), nil
}

// Clear erases the session: its turns, digest versions and the facts
// written in it (tiered.Interface.Forget at memory.LevelSession).
func (h *ChatMessageHistory) Clear(ctx context.Context) error {
	_, err := h.mem.Forget(ctx, h.id, memory.LevelSession)
	return err
}

// SetMessages replaces the session's turns with msgs: it erases the session
// as Clear does, then appends msgs in one batch. Every message is checked
// first, so a message AddMessage would refuse, or more than memory.MaxBatch
// of them, fails before anything is erased. The erasure and the append
// are two calls, not one transaction: a failure of the append leaves the
// session erased, and a reader in between sees it empty.
func (h *ChatMessageHistory) SetMessages(ctx context.Context, msgs []llms.ChatMessage) error {
	if len(msgs) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "langchaingo: %d messages, the limit is %d", len(msgs), memory.MaxBatch)
	}
	turns := make([]tiered.Turn, len(msgs))
	for i, msg := range msgs {
		t, err := turnOf(h.id, msg)
		if err != nil {
			return err
		}
		turns[i] = t
	}
	if err := h.Clear(ctx); err != nil {
		return err
	}
	if len(turns) == 0 {
		return nil
	}
	_, err := h.mem.Append(ctx, h.id, turns...)
	return err
}

// turnOf returns message as the turn to append, checked as the memory
// checks a turn's record before storing it.
func turnOf(id memory.Identity, message llms.ChatMessage) (tiered.Turn, error) {
	role, err := roleOf(message)
	if err != nil {
		return tiered.Turn{}, err
	}
	t := tiered.Turn{Role: role, Content: message.GetContent()}
	if err := memory.NewTurn(id, role, t.Content, time.Unix(0, 0)).Validate(); err != nil {
		return tiered.Turn{}, err
	}
	if blank(t.Content) {
		return tiered.Turn{}, memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the %s message is blank: a turn needs content", string(message.GetType()))
	}
	return t, nil
}
