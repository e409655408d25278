package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StockBinDir returns the bin directory of the machine's own server
// installation, ignoring BinEnv: the directory of pg_config --bindir when
// pg_config is on PATH and points at a server installation, else the
// newest /usr/lib/postgresql/<version>/bin. Tests use it for a cluster
// without the extensions a private prefix adds (Debian's postgresql-15
// package has no pgvector).
func StockBinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if hasServer(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	return "", ErrUnavailable
}

// StockForTest starts a cluster from StockBinDir's binaries for t and
// stops it when t ends. Without server binaries it skips t, unless
// RequireEnv is set, when it fails t.
func StockForTest(t testing.TB) *Cluster {
	t.Helper()
	bin, err := StockBinDir()
	return startForTest(t, bin, err)
}

// Restart stops the server (fast shutdown, then a kill after 10 s) and
// starts it again on the same data directory, socket and port, with the
// command line Start gave it followed by settings, each "name=value" and
// passed as -c name=value, so that they override Start's. Restart with no
// settings restores Start's. It waits until the server accepts a query
// or ctx is done. Connections to the old server are broken.
func (c *Cluster) Restart(ctx context.Context, settings ...string) error {
	if c.server == nil || c.server.Process == nil {
		return errors.New("pgtest: restart of a stopped cluster")
	}
	old := c.server
	_ = old.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = old.Process.Kill()
		<-c.exited
	}
	if c.args == nil {
		c.args = slices.Clone(old.Args[1:])
	}
	args := slices.Clone(c.args)
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	c.server = exec.Command(old.Path, args...)
	c.server.Stdout, c.server.Stderr = c.log, c.log
	c.server.SysProcAttr = old.SysProcAttr
	if err := c.server.Start(); err != nil {
		c.server = nil
		return fmt.Errorf("pgtest: restart postgres: %w", err)
	}
	c.exited = make(chan error, 1)
	go func() { c.exited <- c.server.Wait() }()
	return c.waitReady(ctx)
}
