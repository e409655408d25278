package configmap_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The environment variables that request the real-server mode.
const (
	// assetsEnv names a directory holding kube-apiserver and etcd (as
	// setup-envtest installs them); the tests start both on loopback.
	assetsEnv = "KUBEBUILDER_ASSETS"
	// kubeconfigEnv names a kubeconfig file of a running cluster; used
	// when assetsEnv is not set. The tests work in namespaces of their own
	// and delete them afterwards.
	kubeconfigEnv = "KUBECONFIG"
)

// requireEnv is the environment variable that turns a missing server
// into a failure, as it does for internal/pgtest (pgtest.RequireEnv). CI
// sets it, and sets assetsEnv from scripts/kube-assets.
const requireEnv = "AGENTMEM_REQUIRE_SERVERS"

// notRequested is why the real-server subtests skip when neither variable
// is set and requireEnv is not 1. The same tests always run on the fake
// clientset.
const notRequested = "real API server mode not requested: set " + assetsEnv + " (a directory with kube-apiserver and etcd; scripts/kube-assets builds one) or " + kubeconfigEnv

// real is the API server shared by the package's tests, started once, by
// the test named first.
var real struct {
	once   sync.Once
	cfg    *rest.Config
	client kubernetes.Interface
	err    error
	first  string
	stop   func()
}

// TestMain stops the API server the tests started, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if real.stop != nil {
		real.stop()
	}
	os.Exit(code)
}

// realServer returns a client of a real API server, starting one from
// KUBEBUILDER_ASSETS or connecting through KUBECONFIG; without either it
// skips the test, or fails it when AGENTMEM_REQUIRE_SERVERS=1. The client
// has no client-side rate limit: the tests that use it check what the
// server stores, and make hundreds of calls. When the server did not
// start, the test that tried reports why in full and every later one says
// where to find that report.
func realServer(t *testing.T) kubernetes.Interface {
	t.Helper()
	realConfig(t)
	return real.client
}

// realConfig returns the client configuration of the real API server, as
// realServer does, with client-go's default client-side rate limit (5
// requests a second, bursts of 10), as a controller's client has.
func realConfig(t *testing.T) *rest.Config {
	t.Helper()
	assets, kubeconfig := os.Getenv(assetsEnv), os.Getenv(kubeconfigEnv)
	if assets == "" && kubeconfig == "" {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s=1 and no real API server: %s", requireEnv, notRequested)
		}
		t.Skip(notRequested)
	}
	real.once.Do(func() {
		real.first = t.Name()
		if assets != "" {
			real.cfg, real.stop, real.err = startAPIServer(assets)
		} else {
			real.cfg, real.err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		}
		if real.err == nil {
			unlimited := rest.CopyConfig(real.cfg)
			unlimited.QPS = -1 // no client-side rate limiter
			real.client, real.err = kubernetes.NewForConfig(unlimited)
		}
	})
	switch {
	case real.err != nil && real.first == t.Name():
		t.Fatalf("real API server: %v", real.err)
	case real.err != nil:
		first, _, _ := strings.Cut(real.err.Error(), "; its output")
		t.Fatalf("real API server unavailable: it failed to start in %s, whose failure shows its output (%s)", real.first, first)
	}
	return rest.CopyConfig(real.cfg)
}

// testNamespace creates a fresh namespace for one test and deletes it when
// the test ends.
func testNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "agentmem-test-" + hex.EncodeToString(b[:])
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// startAPIServer starts etcd and kube-apiserver from dir on loopback, with
// their state in a temporary directory, and returns a client
// configuration (a static admin token over TLS with the server's
// self-signed certificate) and a function that stops both and removes the
// directory. args are added to kube-apiserver's own. When either process
// exits before the server is ready, it fails at once with that process's
// output.
func startAPIServer(dir string, args ...string) (*rest.Config, func(), error) {
	tmp, err := os.MkdirTemp("", "agentmem-apiserver-")
	if err != nil {
		return nil, nil, err
	}
	var procs []*process
	stop := func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].kill()
		}
		_ = os.RemoveAll(tmp)
	}
	fail := func(err error) (*rest.Config, func(), error) {
		stop()
		return nil, nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return fail(err)
	}
	client, peer, secure := ports[0], ports[1], ports[2]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	etcd, err := startProcess(filepath.Join(dir, "etcd"),
		"--data-dir="+filepath.Join(tmp, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync=true")
	if err != nil {
		return fail(err)
	}
	procs = append(procs, etcd)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fail(err)
	}
	keyFile := filepath.Join(tmp, "sa.key")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	tokenFile := filepath.Join(tmp, "tokens.csv")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(tokenFile, []byte(token+",agentmem-admin,agentmem-admin,system:masters\n"), 0o600); err != nil {
		return fail(err)
	}
	host := "https://127.0.0.1:" + strconv.Itoa(secure)
	api, err := startProcess(filepath.Join(dir, "kube-apiserver"), append([]string{
		"--etcd-servers=" + etcdURL,
		"--cert-dir=" + filepath.Join(tmp, "certs"),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		// The default (lease) endpoint reconciler refuses a loopback
		// advertise address and the server exits at start; nothing here
		// needs the kubernetes Service's endpoints.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(secure),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=" + host,
		"--service-account-key-file=" + keyFile,
		"--service-account-signing-key-file=" + keyFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=AlwaysAllow",
	}, args...)...)
	if err != nil {
		return fail(err)
	}
	procs = append(procs, api)

	cfg := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	const patience = 90 * time.Second
	deadline := time.Now().Add(patience)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil {
			return cfg, stop, nil
		}
		for _, p := range procs {
			if done, exit := p.exited(); done {
				return fail(fmt.Errorf("%s exited before the API server was ready (%v); its output:\n%s", p.name, exit, p.output()))
			}
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("kube-apiserver not ready after %s: %v; its output:\n%s\netcd's output:\n%s", patience, err, api.output(), etcd.output()))
		}
		select {
		case <-etcd.done:
		case <-api.done:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// process is a server the tests started: its command, output and exit.
type process struct {
	name string
	cmd  *exec.Cmd
	log  syncBuffer
	done chan struct{} // closed when it has exited
	err  error         // its exit, once done is closed
}

// startProcess starts path with args, collecting its output. On Linux the
// kernel kills it if the test process dies first (the parent-death
// signal), so a killed test run leaves no server behind; see
// dieWithParent.
func startProcess(path string, args ...string) (*process, error) {
	p := &process{name: filepath.Base(path), cmd: exec.Command(path, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	p.cmd.SysProcAttr = dieWithParent()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// outputTail is how much of a process's output a failure shows: the end,
// where a server says why it stopped.
const outputTail = 16 << 10

// output returns the end of what the process wrote.
func (p *process) output() string {
	s := p.log.String()
	if len(s) > outputTail {
		s = "[...]" + s[len(s)-outputTail:]
	}
	return s
}

// kill stops the process and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// freePorts returns n loopback TCP ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// syncBuffer collects the output of a process, which exec copies from a
// goroutine of its own.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
