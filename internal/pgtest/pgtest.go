// Package pgtest starts throwaway PostgreSQL clusters for tests, from the
// machine's own server binaries (Debian's postgresql-15 package, or any
// installation whose bin directory holds initdb and postgres).
//
// A cluster lives in a fresh temporary directory, listens on a private unix
// socket in that directory and on a random loopback port, and is removed by
// Stop. The server is a child of the test process that the kernel stops
// when the test process dies (Linux's parent-death signal), so a killed
// test run leaves no cluster running.
//
// Running as root, initdb and the server run as the "postgres" user, as
// PostgreSQL requires.
//
// Clusters start on Linux only, for the parent-death signal: elsewhere
// Start fails with an error that matches ErrUnavailable, so the tests that
// need PostgreSQL skip (or fail under RequireEnv).
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver the readiness check connects with
)

// RequireEnv is the environment variable that turns "PostgreSQL is not
// available" from a skip into a failure. CI sets it.
const RequireEnv = "AGENTMEM_REQUIRE_SERVERS"

// ErrUnavailable reports that no PostgreSQL server binaries were found.
var ErrUnavailable = errors.New("pgtest: PostgreSQL server binaries not found")

// Cluster is one running throwaway cluster.
type Cluster struct {
	// DSN connects as the superuser "postgres" to database "postgres" over
	// the unix socket, in lib/pq's key=value form.
	DSN string
	// Port is the loopback TCP port the server also listens on.
	Port int
	// SocketDir is the directory holding the server's unix socket.
	SocketDir string

	dir    string
	server *exec.Cmd
	args   []string // the server's arguments as StartFrom gave them
	exited chan error
	log    *bytes.Buffer
}

// BinEnv names an environment variable that, when set, is the bin
// directory of the server installation to use (for example a private
// prefix that also holds extensions such as pgvector).
const BinEnv = "AGENTMEM_PG_BIN"

// BinDir returns the directory holding initdb and postgres: $AGENTMEM_PG_BIN
// when set (an error if it holds no server), else the directory of
// pg_config --bindir when pg_config is on PATH and points at a server
// installation, else the newest /usr/lib/postgresql/<version>/bin.
func BinDir() (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		if !hasServer(dir) {
			return "", fmt.Errorf("pgtest: %s=%s holds no initdb and postgres", BinEnv, dir)
		}
		return dir, nil
	}
	return StockBinDir()
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// Start initialises and starts a cluster from BinDir's binaries. The
// context bounds start-up only.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	return StartFrom(ctx, bin)
}

// StartFrom initialises and starts a cluster from the server binaries in
// bin, as Start does from BinDir's. The context bounds start-up only.
func StartFrom(ctx context.Context, bin string) (*Cluster, error) {
	if !hasServer(bin) {
		return nil, ErrUnavailable
	}
	sweepDead()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, SocketDir: filepath.Join(dir, "sock"), log: &bytes.Buffer{}}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.start(ctx, bin); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// dirPrefix starts the name of every cluster directory.
const dirPrefix = "agentmem-pg-"

// ownerFile, in a cluster's directory, holds the pid of the process that
// started the cluster.
const ownerFile = "owner.pid"

// sweepDead removes the directories of clusters whose owning process is
// gone: a test process killed before Stop leaves its directory behind (the
// server itself dies with the process).
func sweepDead() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or being created right now
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls until the server accepts a query, the server exits, or
// ctx is done.
func (c *Cluster) waitReady(ctx context.Context) error {
	db, err := sql.Open("postgres", c.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-c.exited:
			c.exited <- werr
			return fmt.Errorf("pgtest: postgres exited during start-up: %v\n%s", werr, c.log)
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w (last error: %v)\n%s", ctx.Err(), err, c.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (fast shutdown, then a kill after 10 s) and
// removes the cluster's directory. It is safe to call more than once.
func (c *Cluster) Stop() {
	if c.server != nil && c.server.Process != nil {
		_ = c.server.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			_ = c.server.Process.Kill()
			<-c.exited
		}
		c.server = nil
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
		c.dir = ""
	}
}

// Dir returns the cluster's directory, empty after Stop.
func (c *Cluster) Dir() string { return c.dir }

// ForTest starts a cluster for t and stops it when t ends. Without server
// binaries it skips t, unless RequireEnv is set, when it fails t.
func ForTest(t testing.TB) *Cluster {
	t.Helper()
	bin, err := BinDir()
	return startForTest(t, bin, err)
}

// startForTest starts a cluster from bin for t, unless finding bin failed
// with err: then it skips t for ErrUnavailable without RequireEnv, and
// fails t otherwise.
func startForTest(t testing.TB, bin string, err error) *Cluster {
	t.Helper()
	skipUnavailable(t, err)
	if err != nil {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := StartFrom(ctx, bin)
	skipUnavailable(t, err)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// skipUnavailable skips t when err is ErrUnavailable and RequireEnv is not
// set; under RequireEnv the caller fails t for any err.
func skipUnavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrUnavailable) && os.Getenv(RequireEnv) == "" {
		t.Skipf("%v; install postgresql-15 (or set %s to make this a failure)", err, RequireEnv)
	}
}
