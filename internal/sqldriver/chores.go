package sqldriver

import (
	"context"
	"sync"
)

// Chores runs a driver's background work off its callers' paths: each
// chore, by name, at most once at a time, under a context that Stop
// cancels, and Stop waits for the chores running. The zero value is
// ready to use.
type Chores struct {
	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	running map[string]bool
	stopped bool
	wg      sync.WaitGroup
}

// Start runs fn in a goroutine of its own, unless the chore name is
// running already or Stop was called, and reports whether it did.
func (c *Chores) Start(name string, fn func(ctx context.Context)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.running[name] {
		return false
	}
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithCancel(context.Background())
		c.running = map[string]bool{}
	}
	c.running[name] = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.running, name)
			c.mu.Unlock()
		}()
		fn(c.ctx)
	}()
	return true
}

// Stop cancels the running chores' context and waits for them to return;
// later Starts do nothing. It is idempotent.
func (c *Chores) Stop() {
	c.mu.Lock()
	c.stopped = true
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// Wait waits for the chores running to return, without cancelling them.
// No Start may run concurrently with it (as sync.WaitGroup requires).
func (c *Chores) Wait() { c.wg.Wait() }
