//go:build linux

package pgtest

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/agentmem/memory/internal/proctest"
)

// TestClusterHolderChild is the child of
// TestKilledTestProcessLeavesNoServer: it starts a cluster, says its
// server's pid and directory, and waits to be killed.
func TestClusterHolderChild(t *testing.T) {
	proctest.Child(t)
	c, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("READY %d %s\n", c.server.Process.Pid, c.Dir())
	select {} // wait to be killed
}

// TestKilledTestProcessLeavesNoServer runs a child process that starts a
// cluster, kills it with SIGKILL (no chance to clean up), and checks that
// the server dies with it and that the next Start removes its directory.
func TestKilledTestProcessLeavesNoServer(t *testing.T) {
	if _, err := BinDir(); err != nil && os.Getenv(RequireEnv) == "" {
		t.Skip(err)
	}
	child := proctest.Start(t, "TestClusterHolderChild", proctest.Options{})
	var pid int
	var dir string
	for line := range child.Lines() {
		if n, _ := fmt.Sscanf(line, "READY %d %s", &pid, &dir); n == 2 {
			break
		}
		t.Log("child:", line)
	}
	if pid == 0 {
		out, err := child.Wait()
		t.Fatalf("child did not start a cluster (%v)\n%s", err, out)
	}
	child.Kill()
	_, _ = child.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("postgres %d outlived its killed parent", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ForTest(t) // a later start sweeps the dead cluster's directory
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dead cluster directory %s was not removed (%v)", dir, err)
	}
}
