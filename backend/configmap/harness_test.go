package configmap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAPIServerStartFailure checks the real-server harness itself: when
// kube-apiserver exits at start, startAPIServer fails at once with what
// the process wrote, rather than polling for readiness until its patience
// runs out. The programs are stand-ins, so the check runs everywhere.
func TestAPIServerStartFailure(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"etcd":           "#!/bin/sh\nexec sleep 60\n",
		"kube-apiserver": "#!/bin/sh\necho 'E1130 server.go:1] cannot start: stand-in failure' >&2\nexit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	_, _, err := startAPIServer(dir)
	took := time.Since(start)
	if err == nil {
		t.Fatal("startAPIServer succeeded with a kube-apiserver that exits at once")
	}
	if !strings.Contains(err.Error(), "kube-apiserver exited") || !strings.Contains(err.Error(), "stand-in failure") {
		t.Errorf("the error does not say that kube-apiserver exited, with its output: %v", err)
	}
	if took > 10*time.Second {
		t.Errorf("startAPIServer took %s to notice", took)
	}
}

// TestAPIServerLoopbackReconciler starts the real kube-apiserver with the
// default endpoint reconciler, which refuses the loopback address the
// tests advertise, and checks that the start fails at once saying so:
// the failure every real-server test once waited 90 s for.
func TestAPIServerLoopbackReconciler(t *testing.T) {
	dir := os.Getenv(assetsEnv)
	if dir == "" {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s=1 and %s is not set", requireEnv, assetsEnv)
		}
		t.Skip(assetsEnv + " is not set")
	}
	start := time.Now()
	_, stop, err := startAPIServer(dir, "--endpoint-reconciler-type=lease")
	took := time.Since(start)
	if err == nil {
		stop()
		t.Fatal("kube-apiserver started with the lease endpoint reconciler on loopback; the harness's --endpoint-reconciler-type=none may no longer be needed")
	}
	if !strings.Contains(err.Error(), "kube-apiserver exited") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("the error does not carry kube-apiserver's reason: %v", err)
	}
	if took > 30*time.Second {
		t.Errorf("startAPIServer took %s to notice", took)
	}
	t.Logf("failed after %s as expected", took.Round(time.Millisecond))
}
