package configmap

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// DefaultNamespace is the namespace Options.Namespace defaults to.
const DefaultNamespace = "default"

// MaxObjectBytes is the most bytes one ConfigMap may take serialized as
// JSON: 1 MiB, the limit Kubernetes puts on a ConfigMap's data. The driver
// measures the whole object, metadata included, so the API server never
// sees one it would refuse for its size.
const MaxObjectBytes = 1 << 20

// DefaultRetryTimeout is the time Options.RetryTimeout defaults to: far
// longer than contention between a controller's replicas and the
// client-side rate limiter's waits take, so that only a ConfigMap that
// keeps changing under the writer (something rewriting it in a loop)
// reaches it.
const DefaultRetryTimeout = time.Minute

// Options configure a Driver. Client is required; for every other field the
// zero value is the documented default.
type Options struct {
	// Namespace is the one namespace the driver serves: its agents'
	// ConfigMaps live there, and records or queries naming an agent of
	// another namespace are memory.ErrPermissionDenied. Empty means
	// DefaultNamespace.
	Namespace string
	// Client reaches the ConfigMaps: a clientset's CoreV1(), or a fake.
	// It is required; the driver never dials a cluster itself.
	Client typedcorev1.ConfigMapsGetter
	// Clock judges expiry and the age of entries; nil means time.Now.
	Clock memory.Clock
	// Logger receives debug records of conflict retries and of entries
	// dropped to fit MaxObjectBytes; nil discards them.
	Logger *slog.Logger
	// MaxEntries is how many entries of one scope (tenant, user and
	// agent) in a ConfigMap a write of that scope keeps when the object
	// would otherwise exceed MaxObjectBytes: the scope's newest MaxEntries
	// stay, its older ones may be dropped to make room; other scopes'
	// entries are never dropped. Zero means no entry is dropped for its
	// rank; negative is invalid.
	MaxEntries int
	// TTL lets a write drop its own scope's entries created at least TTL
	// ago when the object would otherwise exceed MaxObjectBytes. Zero
	// means no entry is dropped for its age; negative is invalid.
	TTL time.Duration
	// RetryTimeout is how long one ConfigMap update keeps retrying after
	// losing optimistic-concurrency races before it fails with
	// memory.ErrConflict; the context, when it ends first, bounds it
	// instead. Zero means DefaultRetryTimeout; negative is invalid.
	RetryTimeout time.Duration
}

// Driver is a driver.Driver that keeps each agent of its namespace's
// records in the ConfigMap agent-memory-<agent-name>; see the package
// documentation for the layout. It is safe for concurrent use, also by
// several Drivers (in several processes) over the same namespace.
type Driver struct {
	ns       string
	cms      typedcorev1.ConfigMapInterface
	clock    memory.Clock
	log      *slog.Logger
	max      int
	ttl      time.Duration
	retryFor time.Duration
	closed   atomic.Bool

	mu    sync.Mutex         // guards cache
	cache map[string]decoded // by ConfigMap name; see decode
}

var _ driver.Driver = (*Driver)(nil)

// New returns a Driver over opt.Client. It fails with
// memory.ErrInvalidArgument for a nil client, an invalid namespace or a
// negative MaxEntries, TTL or RetryTimeout. It makes no API call.
func New(opt Options) (*Driver, error) {
	if opt.Client == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "the configmap driver needs a ConfigMaps client")
	}
	if opt.Namespace == "" {
		opt.Namespace = DefaultNamespace
	}
	if err := checkNamespace(opt.Namespace); err != nil {
		return nil, err
	}
	if opt.MaxEntries < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "MaxEntries is %d; it cannot be negative", opt.MaxEntries)
	}
	if opt.TTL < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "TTL is %s; it cannot be negative", opt.TTL)
	}
	if opt.RetryTimeout < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "RetryTimeout is %s; it cannot be negative", opt.RetryTimeout)
	}
	if opt.RetryTimeout == 0 {
		opt.RetryTimeout = DefaultRetryTimeout
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{
		ns:       opt.Namespace,
		cms:      opt.Client.ConfigMaps(opt.Namespace),
		clock:    opt.Clock,
		log:      opt.Logger,
		max:      opt.MaxEntries,
		ttl:      opt.TTL,
		retryFor: opt.RetryTimeout,
		cache:    map[string]decoded{},
	}, nil
}

// Namespace returns the namespace the driver keeps its ConfigMaps in.
func (d *Driver) Namespace() string { return d.ns }

// Close marks the driver closed; later calls fail with memory.ErrClosed.
// The injected client is the caller's and stays open. Close is idempotent.
func (d *Driver) Close() error {
	d.closed.Store(true)
	return nil
}

// ready returns the context's error, unchanged, or memory.ErrClosed after
// Close.
func (d *Driver) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.closed.Load() {
		return memory.Errorf(memory.ErrClosed, "the configmap driver is closed")
	}
	return nil
}
