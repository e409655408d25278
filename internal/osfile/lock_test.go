package osfile_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
	"github.com/agentmem/memory/internal/proctest"
)

// busyWait is how long a lock attempt that must fail keeps trying.
const busyWait = 30 * time.Millisecond

// openLockFile opens one new lock file n times, as separate callers would.
func openLockFile(t *testing.T, n int) []*os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lock")
	files := make([]*os.File, n)
	for i := range files {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		files[i] = f
	}
	return files
}

// lockWithin locks f in mode m, giving up after busyWait.
func lockWithin(f *os.File, m osfile.Mode) error {
	ctx, cancel := context.WithTimeout(context.Background(), busyWait)
	defer cancel()
	return osfile.Lock(ctx, f, m)
}

// mustBeBusy checks that f cannot be locked in mode m: the attempt waits
// and ends with its context.
func mustBeBusy(t *testing.T, f *os.File, m osfile.Mode, why string) {
	t.Helper()
	if err := lockWithin(f, m); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			_ = osfile.Unlock(f)
		}
		t.Fatalf("%s: Lock = %v, want context.DeadlineExceeded", why, err)
	}
}

func mustLock(t *testing.T, f *os.File, m osfile.Mode, why string) {
	t.Helper()
	if err := lockWithin(f, m); err != nil {
		t.Fatalf("%s: Lock = %v, want the lock", why, err)
	}
}

func mustUnlock(t *testing.T, f *os.File) {
	t.Helper()
	if err := osfile.Unlock(f); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// TestExclusiveExcludesEveryLock checks, with two opens of one file in
// this process, that an exclusive lock keeps out both kinds of lock until
// it is released.
func TestExclusiveExcludesEveryLock(t *testing.T) {
	f := openLockFile(t, 2)
	mustLock(t, f[0], osfile.Exclusive, "the first exclusive lock")
	mustBeBusy(t, f[1], osfile.Exclusive, "an exclusive lock beside an exclusive one")
	mustBeBusy(t, f[1], osfile.Shared, "a shared lock beside an exclusive one")
	mustUnlock(t, f[0])
	mustLock(t, f[1], osfile.Exclusive, "an exclusive lock after the release")
	mustUnlock(t, f[1])
	mustLock(t, f[0], osfile.Shared, "a shared lock after the release")
}

// TestSharedLocksCoexist checks that shared locks on separate opens are
// held together, keep an exclusive lock out while any of them is held,
// and let it in once all are released.
func TestSharedLocksCoexist(t *testing.T) {
	f := openLockFile(t, 3)
	mustLock(t, f[0], osfile.Shared, "the first shared lock")
	mustLock(t, f[1], osfile.Shared, "a second shared lock")
	mustBeBusy(t, f[2], osfile.Exclusive, "an exclusive lock beside two shared ones")
	mustUnlock(t, f[0])
	mustBeBusy(t, f[2], osfile.Exclusive, "an exclusive lock beside one shared one")
	mustUnlock(t, f[1])
	mustLock(t, f[2], osfile.Exclusive, "an exclusive lock once the shared ones are gone")
}

// TestLockWaitsForTheRelease checks that a waiting Lock gets the lock as
// soon as it is released, both when its context can end (it polls) and
// when it cannot (it waits in the kernel), and not before.
func TestLockWaitsForTheRelease(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"a context that can end", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}},
		{"a context that never ends", func() (context.Context, context.CancelFunc) {
			return context.Background(), func() {}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := openLockFile(t, 2)
			mustLock(t, f[0], osfile.Exclusive, "the holder's lock")
			ctx, cancel := c.ctx()
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- osfile.Lock(ctx, f[1], osfile.Exclusive) }()
			select {
			case err := <-done:
				t.Fatalf("Lock returned %v while another open file held the lock", err)
			case <-time.After(busyWait):
			}
			mustUnlock(t, f[0])
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Lock after the release = %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Lock still waiting after the release")
			}
			mustBeBusy(t, f[0], osfile.Shared, "a shared lock beside the waiter's")
		})
	}
}

// TestLockCancelledWhileWaiting checks that cancelling the context of a
// waiting Lock ends the wait with context.Canceled and takes no lock.
func TestLockCancelledWhileWaiting(t *testing.T) {
	f := openLockFile(t, 3)
	mustLock(t, f[0], osfile.Shared, "the holder's lock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- osfile.Lock(ctx, f[1], osfile.Exclusive) }()
	time.Sleep(busyWait)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock still waiting after its context was cancelled")
	}
	mustUnlock(t, f[0])
	mustLock(t, f[2], osfile.Exclusive, "an exclusive lock once the holder is gone")
}

// TestLockRefusesAnUnknownMode checks that a mode other than Shared and
// Exclusive is an invalid argument.
func TestLockRefusesAnUnknownMode(t *testing.T) {
	f := openLockFile(t, 1)
	if err := osfile.Lock(context.Background(), f[0], 0); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Lock in mode 0 = %v, want memory.ErrInvalidArgument", err)
	}
}

// The environment that tells TestLockHolderChild what to lock.
const (
	holderPathEnv = "AGENTMEM_OSFILE_HOLDER_PATH"
	holderModeEnv = "AGENTMEM_OSFILE_HOLDER_MODE"
)

// TestLockHolderChild is the child half of TestLocksAcrossProcesses: it
// locks the file the environment names in the mode it names, saying when
// it starts waiting and when it has the lock, and holds the lock until
// the parent lets it go on (proctest's Go) or kills it.
func TestLockHolderChild(t *testing.T) {
	proctest.Child(t)
	mode := osfile.Shared
	if os.Getenv(holderModeEnv) == "exclusive" {
		mode = osfile.Exclusive
	}
	f, err := os.OpenFile(os.Getenv(holderPathEnv), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Println("waiting")
	if err := osfile.Lock(context.Background(), f, mode); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	proctest.Ready()
	if err := osfile.Unlock(f); err != nil {
		t.Fatal(err)
	}
}

// startHolder starts a child that locks path in mode ("shared" or
// "exclusive") and returns it with its next line unread: "waiting" read,
// "locked" to come.
func startHolder(t *testing.T, path, mode string) (*proctest.Process, func() (string, bool)) {
	t.Helper()
	p := proctest.Start(t, "TestLockHolderChild", proctest.Options{Env: []string{holderPathEnv + "=" + path, holderModeEnv + "=" + mode}})
	next, stop := iter.Pull(p.Lines())
	t.Cleanup(stop)
	if line, ok := next(); line != "waiting" {
		t.Fatalf("the %s holder said %q (%v), want waiting", mode, line, ok)
	}
	return p, next
}

// holdLock starts a child holding a lock of mode on path and returns once
// it holds it.
func holdLock(t *testing.T, path, mode string) *proctest.Process {
	t.Helper()
	p, next := startHolder(t, path, mode)
	if line, ok := next(); line != "locked" {
		t.Fatalf("the %s holder said %q (%v), want locked", mode, line, ok)
	}
	return p
}

// release makes the holder unlock and exit, and waits for it.
func release(t *testing.T, p *proctest.Process) {
	t.Helper()
	p.Go()
	if out, err := p.Wait(); err != nil {
		t.Fatalf("the holder failed: %v\n%s", err, out)
	}
}

// TestLocksAcrossProcesses checks the locks between this process and a
// child holding one: an exclusive lock there keeps out both kinds here, a
// shared one there lets a shared one in here and keeps an exclusive one
// out, and a lock is gone once its holder releases it or is killed.
func TestLocksAcrossProcesses(t *testing.T) {
	f := openLockFile(t, 1)[0]
	path := f.Name()

	h := holdLock(t, path, "exclusive")
	mustBeBusy(t, f, osfile.Exclusive, "an exclusive lock beside another process's exclusive one")
	mustBeBusy(t, f, osfile.Shared, "a shared lock beside another process's exclusive one")
	release(t, h)
	mustLock(t, f, osfile.Exclusive, "an exclusive lock once the other process released its own")
	mustUnlock(t, f)

	h = holdLock(t, path, "shared")
	mustLock(t, f, osfile.Shared, "a shared lock beside another process's shared one")
	mustUnlock(t, f)
	mustBeBusy(t, f, osfile.Exclusive, "an exclusive lock beside another process's shared one")
	h.Kill()
	_, _ = h.Wait()
	mustLock(t, f, osfile.Exclusive, "an exclusive lock once the other process was killed")
	mustUnlock(t, f)

	// While this process holds the lock, a child's Lock waits for it.
	mustLock(t, f, osfile.Exclusive, "this process's exclusive lock")
	p, next := startHolder(t, path, "shared")
	got := make(chan string, 1)
	go func() {
		line, _ := next()
		got <- line
	}()
	select {
	case line := <-got:
		t.Fatalf("the child took a shared lock (%q) while this process held an exclusive one", line)
	case <-time.After(3 * busyWait):
	}
	mustUnlock(t, f)
	select {
	case line := <-got:
		if line != "locked" {
			t.Fatalf("the child said %q, want locked", line)
		}
	case <-time.After(10 * time.Second):
		p.Kill()
		t.Fatal("the child still waits after the release")
	}
	release(t, p)
}
