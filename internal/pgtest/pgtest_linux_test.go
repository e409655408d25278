//go:build linux

package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestKilledTestProcessLeavesNoServer runs a child process that starts a
// cluster, kills it with SIGKILL (no chance to clean up), and checks that
// the server dies with it and that the next Start removes its directory.
func TestKilledTestProcessLeavesNoServer(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		c, err := Start(context.Background())
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Printf("READY %d %s\n", c.server.Process.Pid, c.Dir())
		select {} // wait to be killed
	}
	if _, err := BinDir(); err != nil && os.Getenv(RequireEnv) == "" {
		t.Skip(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestKilledTestProcessLeavesNoServer$")
	child.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "READY %d %s", &pid, &dir); n == 2 {
			break
		}
		t.Log("child:", sc.Text())
	}
	if pid == 0 {
		_ = child.Process.Kill()
		t.Fatal("child did not start a cluster")
	}
	_ = child.Process.Kill()
	_ = child.Wait()
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
