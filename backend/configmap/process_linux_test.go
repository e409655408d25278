//go:build linux

package configmap_test

import "syscall"

// dieWithParent is the process attributes that make the kernel kill a
// server the tests started when the test process dies.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
