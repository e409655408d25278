//go:build !linux

package configmap_test

import "syscall"

// dieWithParent is nil here: only Linux has the parent-death signal, so a
// killed test run may leave the servers it started running.
func dieWithParent() *syscall.SysProcAttr { return nil }
