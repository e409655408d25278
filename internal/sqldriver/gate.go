package sqldriver

import (
	"context"
	"sync"

	"github.com/agentmem/memory"
)

// Gate admits a driver's calls until Close: a call holds it shared from
// Enter to Leave, and Close takes it exclusively, so Close waits for the
// calls in progress and every later call fails with memory.ErrClosed.
// The zero value is open.
type Gate struct {
	mu     sync.RWMutex
	closed bool
}

// Enter admits a call, which must call Leave once Enter returns nil. It
// refuses the call, in this order, with ctx.Err() when ctx is done, with
// invalid when that is not nil (the call's arguments, as a driver.Check
// function judged them), and after Close with memory.ErrClosed, naming
// the driver name.
func (g *Gate) Enter(ctx context.Context, name string, invalid error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if invalid != nil {
		return invalid
	}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return memory.Errorf(memory.ErrClosed, "%s driver is closed", name)
	}
	return nil
}

// Leave ends a call Enter admitted.
func (g *Gate) Leave() { g.mu.RUnlock() }

// Close closes the gate once the calls in progress have left and runs
// release, whose error it returns, before any call can enter again. Only
// the first Close runs release; later ones return nil.
func (g *Gate) Close(release func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return release()
}
