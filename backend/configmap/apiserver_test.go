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

// notRequested is why the real-server subtests skip. Unlike PostgreSQL,
// whose server binaries the test scripts find on the machine, a Kubernetes
// API server is never available here unless the caller provides one, so
// AGENTMEM_REQUIRE_SERVERS does not turn this skip into a failure: the
// mode is opt-in, and the same tests always run on the fake clientset.
const notRequested = "real API server mode not requested: set " + assetsEnv + " (a directory with kube-apiserver and etcd) or " + kubeconfigEnv

// real is the API server shared by the package's tests, started once.
var real struct {
	once   sync.Once
	client kubernetes.Interface
	err    error
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
// KUBEBUILDER_ASSETS or connecting through KUBECONFIG, or skips the test
// when neither is set.
func realServer(t *testing.T) kubernetes.Interface {
	t.Helper()
	assets, kubeconfig := os.Getenv(assetsEnv), os.Getenv(kubeconfigEnv)
	if assets == "" && kubeconfig == "" {
		t.Skip(notRequested)
	}
	real.once.Do(func() {
		var cfg *rest.Config
		if assets != "" {
			cfg, real.stop, real.err = startAPIServer(assets)
		} else {
			cfg, real.err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		}
		if real.err == nil {
			real.client, real.err = kubernetes.NewForConfig(cfg)
		}
	})
	if real.err != nil {
		t.Fatalf("real API server: %v", real.err)
	}
	return real.client
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
// directory.
func startAPIServer(dir string) (*rest.Config, func(), error) {
	tmp, err := os.MkdirTemp("", "agentmem-apiserver-")
	if err != nil {
		return nil, nil, err
	}
	var procs []*exec.Cmd
	stop := func() {
		for i := len(procs) - 1; i >= 0; i-- {
			_ = procs[i].Process.Kill()
			_ = procs[i].Wait()
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
	var logs syncBuffer
	etcd := exec.Command(filepath.Join(dir, "etcd"),
		"--data-dir="+filepath.Join(tmp, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync=true")
	etcd.Stdout, etcd.Stderr = &logs, &logs
	if err := etcd.Start(); err != nil {
		return fail(fmt.Errorf("starting etcd: %w", err))
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
	api := exec.Command(filepath.Join(dir, "kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--cert-dir="+filepath.Join(tmp, "certs"),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(secure),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer="+host,
		"--service-account-key-file="+keyFile,
		"--service-account-signing-key-file="+keyFile,
		"--token-auth-file="+tokenFile,
		"--authorization-mode=AlwaysAllow")
	api.Stdout, api.Stderr = &logs, &logs
	if err := api.Start(); err != nil {
		return fail(fmt.Errorf("starting kube-apiserver: %w", err))
	}
	procs = append(procs, api)

	cfg := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fail(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil {
			return cfg, stop, nil
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("kube-apiserver not ready after 90s: %v\n%s", err, logs.String()))
		}
		time.Sleep(250 * time.Millisecond)
	}
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

// syncBuffer collects the output of both processes, which exec copies from
// goroutines of its own.
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
