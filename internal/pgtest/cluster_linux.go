//go:build linux

package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// alive reports whether the process pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func (c *Cluster) start(ctx context.Context, bin string) error {
	cred, err := serverCredential()
	if err != nil {
		return err
	}
	data := filepath.Join(c.dir, "data")
	if err := os.Mkdir(c.SocketDir, 0o700); err != nil {
		return err
	}
	if cred != nil {
		for _, p := range []string{c.dir, c.SocketDir} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.Port = port
	c.server = exec.Command(filepath.Join(bin, "postgres"),
		"-D", data, "-k", c.SocketDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=200",
		"-c", "shared_buffers=128MB")
	c.server.Stdout, c.server.Stderr = c.log, c.log
	// The kernel stops the server when this process dies, so no cluster
	// outlives a killed test run.
	c.server.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := c.server.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.exited = make(chan error, 1)
	go func() { c.exited <- c.server.Wait() }()
	c.DSN = fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", c.SocketDir, port)
	return c.waitReady(ctx)
}

// serverCredential is the postgres user's when running as root (initdb
// and the server refuse to run as root), nil otherwise.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs a postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}
