package langchaingo

import (
	"context"
	"log/slog"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// DefaultMemoryKey is the variable Memory loads the recalled memory under
// unless MemoryOptions.MemoryKey names another: "history", as langchaingo's
// own buffer memories and the prompts of chains.NewConversation and of the
// conversational agent spell it.
const DefaultMemoryKey = "history"

// MemoryOptions configure a Memory. The zero value is the documented
// default.
type MemoryOptions struct {
	// MemoryKey is the variable the recalled memory is loaded under; empty
	// means DefaultMemoryKey.
	MemoryKey string
	// InputKey names the input value that is recalled for and stored as
	// the user's turn; empty means the only input value, as langchaingo's
	// memories default (a call with several inputs then fails).
	InputKey string
	// OutputKey names the output value stored as the assistant's turn;
	// empty means the only output value (an agent executor's "output",
	// a conversation chain's "text").
	OutputKey string
	// ReturnMessages loads the memory as chat messages ([]llms.ChatMessage)
	// rather than the rendered block: a system message with the facts and
	// the digest (as tiered.Render renders them), when there are any, then
	// the window's turns as human, ai, system and tool messages. For
	// prompts with a messages placeholder; an agent executor, whose inputs
	// must all be strings, needs the default.
	ReturnMessages bool
	// Level is the level facts are recalled at (tiered.RecallOptions.Level:
	// memory.LevelSession, LevelAgent, LevelUser or LevelStore); empty
	// means the tiered memory's own default.
	Level memory.Level
	// K is how many facts at most a recall returns; zero means the tiered
	// memory's default.
	K int
	// Budget is the tokens a recall may return; zero means the tiered
	// memory's window budget.
	Budget int
	// Logger is told of a recall that could not read a tier (the recall
	// returns the others all the same); nil discards it.
	Logger *slog.Logger
}

// Memory is a langchaingo schema.Memory over the tiered memory of one
// session. It is safe for concurrent use as far as its tiered.Interface is.
type Memory struct {
	mem tiered.Interface
	id  memory.Identity
	opt MemoryOptions
}

// NewMemory returns the langchaingo memory of id's session in mem. id is
// the identity the host program verified for the session; it must have a
// session (memory.ErrIncompleteScope otherwise) and be valid. A nil mem,
// a level other than the four tiered ones, or a negative K or Budget is
// memory.ErrInvalidArgument.
func NewMemory(mem tiered.Interface, id memory.Identity, opt MemoryOptions) (*Memory, error) {
	if err := checkBinding(mem, id, "the langchaingo memory", true); err != nil {
		return nil, err
	}
	if opt.Level != "" {
		if err := checkTieredLevel(opt.Level); err != nil {
			return nil, err
		}
	}
	if opt.K < 0 || opt.Budget < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "langchaingo: K and Budget must not be negative (K %d, Budget %d)", opt.K, opt.Budget)
	}
	if opt.MemoryKey == "" {
		opt.MemoryKey = DefaultMemoryKey
	}
	return &Memory{mem: mem, id: id, opt: opt}, nil
}

// GetMemoryKey returns the variable the memory is loaded under.
func (m *Memory) GetMemoryKey(context.Context) string { return m.opt.MemoryKey }

// MemoryVariables returns the one variable LoadMemoryVariables sets: the
// memory key.
func (m *Memory) MemoryVariables(context.Context) []string { return []string{m.opt.MemoryKey} }

// LoadMemoryVariables recalls what the session should remember before a
// call about its input (tiered.Interface.RecallWith at MemoryOptions.Level):
// the window, the digest and the facts most relevant to the input value,
// and returns them under the memory key, as the rendered block (empty when
// nothing is recalled) or, with MemoryOptions.ReturnMessages, as chat
// messages. Inputs without the input value (no InputKey and no input, as
// a chain may load its memory before it has one) recall the window and
// digest alone. An input value that is not a string, or several inputs and
// no InputKey, is memory.ErrInvalidArgument.
//
// Recall is soft: a tier that cannot be read is left out and logged to
// MemoryOptions.Logger, and the others are returned.
func (m *Memory) LoadMemoryVariables(ctx context.Context, inputs map[string]any) (map[string]any, error) {
	text, err := value(inputs, m.opt.InputKey, "input", true)
	if err != nil {
		return nil, err
	}
	rec, err := m.mem.RecallWith(ctx, m.id, text, tiered.RecallOptions{Level: m.opt.Level, K: m.opt.K, Budget: m.opt.Budget})
	if err != nil {
		return nil, err
	}
	if rec.Degraded && m.opt.Logger != nil {
		m.opt.Logger.WarnContext(ctx, "langchaingo: recall degraded",
			"session", m.id.Session, "window", rec.Errors.Window, "digest", rec.Errors.Digest, "facts", rec.Errors.Facts)
	}
	if !m.opt.ReturnMessages {
		return map[string]any{m.opt.MemoryKey: rec.Text}, nil
	}
	var msgs []llms.ChatMessage
	if block := tiered.Render(tiered.Recollection{Digest: rec.Digest, Facts: rec.Facts}); block != "" {
		msgs = append(msgs, llms.SystemChatMessage{Content: block})
	}
	msgs = append(msgs, messages(rec.Window)...)
	return map[string]any{m.opt.MemoryKey: msgs}, nil
}

// SaveContext stores a call's input value as a user turn and its output
// value as an assistant turn, in one append (tiered.Interface.Append). A
// side that is blank is not stored, since a turn needs content; both blank,
// a missing or non-string value, or several values and no key naming one
// is memory.ErrInvalidArgument. Errors of the append are returned as it
// classifies them.
func (m *Memory) SaveContext(ctx context.Context, inputs, outputs map[string]any) error {
	in, err := value(inputs, m.opt.InputKey, "input", false)
	if err != nil {
		return err
	}
	out, err := value(outputs, m.opt.OutputKey, "output", false)
	if err != nil {
		return err
	}
	var turns []tiered.Turn
	if !blank(in) {
		turns = append(turns, tiered.Turn{Role: memory.RoleUser, Content: in})
	}
	if !blank(out) {
		turns = append(turns, tiered.Turn{Role: memory.RoleAssistant, Content: out})
	}
	if len(turns) == 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the input and the output are both blank: nothing to store")
	}
	_, err = m.mem.Append(ctx, m.id, turns...)
	return err
}

// Clear erases the session: its turns, digest versions and the facts
// written in it (tiered.Interface.Forget at memory.LevelSession), so a
// recall at a wider level no longer finds those facts either.
func (m *Memory) Clear(ctx context.Context) error {
	_, err := m.mem.Forget(ctx, m.id, memory.LevelSession)
	return err
}

// value returns the string a memory reads from a call's values: the one
// under key or, with no key, the only one. With optional, no values (and
// no key) is the empty string rather than an error.
func value(values map[string]any, key, what string, optional bool) (string, error) {
	var v any
	switch {
	case key != "":
		var ok bool
		if v, ok = values[key]; !ok {
			return "", memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the %s values have no %q", what, key)
		}
	case len(values) == 0:
		if optional {
			return "", nil
		}
		return "", memory.Errorf(memory.ErrInvalidArgument, "langchaingo: there is no %s value", what)
	case len(values) > 1:
		return "", memory.Errorf(memory.ErrInvalidArgument, "langchaingo: %d %s values and no %s key naming one", len(values), what, what)
	default:
		for k, only := range values {
			key, v = k, only
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", memory.Errorf(memory.ErrInvalidArgument, "langchaingo: the %s value %q is a %T, not a string", what, key, v)
	}
	return s, nil
}

// blank reports whether s holds no content a turn may store.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// checkTieredLevel accepts the four levels the tiered memory reads facts
// at.
func checkTieredLevel(l memory.Level) error {
	if _, ok := width[l]; ok {
		return nil
	}
	if err := l.Check(); err != nil {
		return err
	}
	return memory.Errorf(memory.ErrInvalidArgument, "langchaingo: level %q is not one the tiered memory reads at: session, agent, user or store", string(l))
}

// width orders the tiered levels from the narrowest to the widest, as the
// service document's read scopes are: session, agent, user, store.
var width = map[memory.Level]int{
	memory.LevelSession: 0,
	memory.LevelAgent:   1,
	memory.LevelUser:    2,
	memory.LevelStore:   3,
}

// levels lists the tiered levels from the narrowest.
var levels = []memory.Level{memory.LevelSession, memory.LevelAgent, memory.LevelUser, memory.LevelStore}
