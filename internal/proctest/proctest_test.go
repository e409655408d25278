package proctest_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory/internal/proctest"
)

// modeEnv tells TestChild what to do.
const modeEnv = "PROCTEST_TEST_MODE"

// TestChild is the child of the tests below; run directly, it skips.
func TestChild(t *testing.T) {
	proctest.Child(t)
	switch os.Getenv(modeEnv) {
	case "lines":
		fmt.Println("one")
		fmt.Fprintln(os.Stderr, "two")
		fmt.Println("three")
	case "fail":
		t.Fatal("the child fails")
	case "hang":
		fmt.Println("hanging")
		select {}
	case "group":
		ready := time.Now().UnixNano()
		proctest.Ready()
		fmt.Println("times", ready, time.Now().UnixNano())
	default:
		t.Fatalf("unknown mode %q", os.Getenv(modeEnv))
	}
}

func mode(m string) proctest.Options { return proctest.Options{Env: []string{modeEnv + "=" + m}} }

// TestLines checks that Lines yields what the child writes to standard
// output and standard error, in order, and that Wait returns all of it
// and no error for a child that passes.
func TestLines(t *testing.T) {
	p := proctest.Start(t, "TestChild", mode("lines"))
	var got []string
	for line := range p.Lines() {
		got = append(got, line)
		if line == "three" {
			break
		}
	}
	if want := []string{"one", "two", "three"}; !slices.Equal(got, want) {
		t.Errorf("Lines yielded %q, want %q", got, want)
	}
	out, err := p.Wait()
	if err != nil || !strings.HasPrefix(string(out), "one\ntwo\nthree\n") || !strings.Contains(string(out), "PASS") {
		t.Errorf("Wait = %v with output\n%s", err, out)
	}
}

// TestFailingChild checks that a child's failure reaches Wait, with its
// output.
func TestFailingChild(t *testing.T) {
	out, err := proctest.Start(t, "TestChild", mode("fail")).Wait()
	if err == nil || !strings.Contains(string(out), "the child fails") {
		t.Errorf("Wait = %v with output\n%s\nwant an error and the child's message", err, out)
	}
}

// TestKill checks that a killed child ends, and Wait with it.
func TestKill(t *testing.T) {
	p := proctest.Start(t, "TestChild", mode("hang"))
	for line := range p.Lines() {
		if line == "hanging" {
			p.Kill()
		}
	}
	if _, err := p.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait after Kill = %v, want the kill", err)
	}
}

// TestTimeout checks that a child that hangs past its timeout ends with
// an error and reports its goroutines.
func TestTimeout(t *testing.T) {
	opt := mode("hang")
	opt.Timeout = time.Second
	start := time.Now()
	out, err := proctest.Start(t, "TestChild", opt).Wait()
	if err == nil || !strings.Contains(string(out), "test timed out") {
		t.Errorf("Wait = %v with output\n%s\nwant a timeout", err, out)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the hung child took %v to end", d)
	}
}

// TestRun checks that Run's children go on from Ready only once every
// one of them is ready.
func TestRun(t *testing.T) {
	env := []string{modeEnv + "=group"}
	outs := proctest.Run(t, "TestChild", env, env, env)
	var lastReady, firstGo int64
	for i, out := range outs {
		var ready, gone int64
		for line := range strings.Lines(string(out)) {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "times" {
				ready, _ = strconv.ParseInt(f[1], 10, 64)
				gone, _ = strconv.ParseInt(f[2], 10, 64)
			}
		}
		if ready == 0 || gone == 0 {
			t.Fatalf("child %d reported no times:\n%s", i, out)
		}
		lastReady = max(lastReady, ready)
		if firstGo == 0 || gone < firstGo {
			firstGo = gone
		}
	}
	if firstGo < lastReady {
		t.Errorf("a child went on %v before the last was ready", time.Duration(lastReady-firstGo))
	}
}
