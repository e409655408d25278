package sqldriver

import (
	"context"
	"testing"
	"time"
)

// TestChores checks that a chore runs once at a time, that Stop cancels
// and waits for it, and that nothing starts after Stop.
func TestChores(t *testing.T) {
	var c Chores
	started, release := make(chan struct{}), make(chan struct{})
	var cancelled bool
	if !c.Start("a", func(ctx context.Context) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			cancelled = true
		}
	}) {
		t.Fatal("the first Start did not start its chore")
	}
	<-started
	if c.Start("a", func(context.Context) {}) {
		t.Error("Start started chore a while it ran")
	}
	ran := make(chan struct{})
	if !c.Start("b", func(context.Context) { close(ran) }) {
		t.Error("Start did not start chore b beside chore a")
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("chore b did not run")
	}
	c.Stop()
	if !cancelled {
		t.Error("Stop returned before chore a saw its context cancelled")
	}
	if c.Start("c", func(context.Context) { t.Error("a chore ran after Stop") }) {
		t.Error("Start started a chore after Stop")
	}
	c.Stop()
}
