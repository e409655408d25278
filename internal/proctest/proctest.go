// Package proctest runs the test binary again as child processes that play
// one side of a multi-process test: writers sharing a store from several
// processes at once, a writer killed with SIGKILL at a random moment.
//
// A child is a test of its own that calls Child first: run by go test, it
// skips; started by Start, it runs alone (-test.run names it), with RoleEnv
// naming it and whatever the parent added to its environment. The parent
// reads the child's output line by line as it comes, or all of it at the
// end, and may kill the child at any moment; a child still running at its
// timeout, or when the parent test ends, is killed. Run starts a group of
// children that wait for each other at Ready, so they go on at once.
package proctest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// RoleEnv is the environment variable that names the test a child process
// was started to run. The parent process leaves it unset.
const RoleEnv = "AGENTMEM_PROCTEST_CHILD"

// DefaultTimeout is how long a child may run when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// grace is how long after its own -test.timeout a child has to report its
// goroutines and exit before the parent kills it.
const grace = 10 * time.Second

// readyLine is what Ready writes for the parent to read.
const readyLine = "proctest: ready"

// Child marks t as the body of a child process: it returns in a process
// Start started to run t, and skips t anywhere else.
func Child(t testing.TB) {
	t.Helper()
	if os.Getenv(RoleEnv) != t.Name() {
		t.Skipf("%s runs only as a child process another test starts", t.Name())
	}
}

// IsChild reports whether this process is a child Start started.
func IsChild() bool { return os.Getenv(RoleEnv) != "" }

// Ready tells the parent that this child is ready, and waits until the
// parent lets it go on (Process.Go): Run lets its children go once all are
// ready, so that they work at once rather than one after another.
func Ready() {
	fmt.Println(readyLine)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
}

// Options configure a child process. The zero value is the documented
// default.
type Options struct {
	// Env is added to the child's environment, which is otherwise the
	// parent's.
	Env []string
	// Timeout is how long the child may run: it gets it as -test.timeout,
	// so that a hung child reports its goroutines, and is killed shortly
	// after. Zero means DefaultTimeout, or less when the parent test's
	// deadline comes sooner.
	Timeout time.Duration
}

// Process is a child process that Start started.
type Process struct {
	name     string
	cmd      *exec.Cmd
	stdin    io.WriteCloser // closed by Go
	pipe     *os.File       // the read end of the child's standard output and error
	out      *bufio.Reader  // reads pipe
	output   bytes.Buffer   // everything read from out
	timer    *time.Timer
	timedOut atomic.Bool
	waited   bool
	err      error
}

// Start starts this test binary again as a child process running the test
// named child, which calls Child. The child's standard output and standard
// error go, as written, to one pipe that Lines and Wait read. A child
// still running when the parent test ends is killed. In a child process,
// Start skips t: children start no children.
func Start(t testing.TB, child string, opt Options) *Process {
	t.Helper()
	if IsChild() {
		t.Skip("this is a child process")
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
		if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
			if deadline, ok := dt.Deadline(); ok {
				timeout = max(min(timeout, time.Until(deadline)-2*grace), grace)
			}
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(child), "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Env = append(append(os.Environ(), RoleEnv+"="+child), opt.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("starting child %s: %v", child, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("starting child %s: %v", child, err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	_ = w.Close() // the child has its own copy
	if err != nil {
		_ = r.Close()
		t.Fatalf("starting child %s: %v", child, err)
	}
	p := &Process{name: child, cmd: cmd, stdin: stdin, pipe: r, out: bufio.NewReader(r)}
	p.timer = time.AfterFunc(timeout+grace, func() {
		p.timedOut.Store(true)
		p.Kill()
	})
	t.Cleanup(func() {
		if !p.waited {
			p.Kill()
			_, _ = p.Wait()
		}
	})
	return p
}

// runPattern returns the -test.run pattern that matches the test named
// name and nothing else.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, s := range parts {
		parts[i] = "^" + regexp.QuoteMeta(s) + "$"
	}
	return strings.Join(parts, "/")
}

// Lines yields the lines the child writes, without their line ends, as
// they come, until the child closes its output (it exits, or is killed).
// Breaking out of the loop leaves the rest for a later Lines or Wait.
// Lines and Wait are for one goroutine at a time.
func (p *Process) Lines() iter.Seq[string] {
	return func(yield func(string) bool) {
		for !p.waited {
			line, err := p.out.ReadString('\n')
			p.output.WriteString(line)
			if line != "" && !yield(strings.TrimSuffix(line, "\n")) {
				return
			}
			if err != nil {
				return
			}
		}
	}
}

// Go lets a child waiting in Ready go on. It is safe to call more than
// once.
func (p *Process) Go() { _ = p.stdin.Close() }

// Kill kills the child with SIGKILL. It is safe to call at any time, from
// any goroutine, any number of times.
func (p *Process) Kill() { _ = p.cmd.Process.Kill() }

// Wait waits for the child to exit, reading what is left of its output,
// and returns all it wrote. The error is nil when it exited with status 0;
// it is the exit status otherwise, and says so when the child was killed
// at its timeout. Later calls return the same.
func (p *Process) Wait() ([]byte, error) {
	if !p.waited {
		_, _ = io.Copy(&p.output, p.out)
		_ = p.pipe.Close()
		p.err = p.cmd.Wait()
		p.timer.Stop()
		p.waited = true
		if p.timedOut.Load() {
			p.err = fmt.Errorf("child %s killed at its timeout: %w", p.name, p.err)
		}
	}
	return p.output.Bytes(), p.err
}

// Run starts one child per element of envs, each running the test named
// child with that element added to its environment, lets them go on at
// once when all have called Ready (or exited), and waits for them all. It
// returns their outputs, in the order of envs, and stops t with the output
// of the first that failed.
func Run(t testing.TB, child string, envs ...[]string) [][]byte {
	t.Helper()
	procs := make([]*Process, len(envs))
	for i, env := range envs {
		procs[i] = Start(t, child, Options{Env: env})
	}
	for _, p := range procs {
		for line := range p.Lines() {
			if line == readyLine {
				break
			}
		}
	}
	for _, p := range procs {
		p.Go()
	}
	outputs := make([][]byte, len(procs))
	for i, p := range procs {
		out, err := p.Wait()
		if err != nil {
			t.Fatalf("child %d of %d (%s) failed: %v\n%s", i, len(procs), child, err, out)
		}
		outputs[i] = out
	}
	return outputs
}
