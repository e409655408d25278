package configmap

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// DefaultNamespace is the namespace Options.Namespace defaults to.
const DefaultNamespace = "default"

// MaxObjectBytes is the most bytes one ConfigMap may take serialized as
// JSON: 1 MiB, the limit Kubernetes puts on a ConfigMap's data. The driver
// measures the whole object, metadata included, so the API server never
// sees one it would refuse for its size.
const MaxObjectBytes = 1 << 20

// MaxAttempts bounds the read-modify-write attempts of one ConfigMap
// update; a write that loses the optimistic-concurrency race this many
// times in a row fails with memory.ErrConflict.
const MaxAttempts = 8

// Options configure a Driver. Client is required; for every other field the
// zero value is the documented default.
type Options struct {
	// Namespace is the namespace of the ConfigMaps (the agents'
	// namespace); empty means DefaultNamespace.
	Namespace string
	// Client reaches the ConfigMaps: a clientset's CoreV1(), or a fake.
	// It is required; the driver never dials a cluster itself.
	Client typedcorev1.ConfigMapsGetter
	// Clock judges expiry and the age of entries; nil means time.Now.
	Clock backend.Clock
	// Logger receives debug records of conflict retries and of entries
	// dropped to fit MaxObjectBytes; nil discards them.
	Logger *slog.Logger
	// MaxEntries is how many entries of one ConfigMap a write may keep
	// when the object would otherwise exceed MaxObjectBytes: the newest
	// MaxEntries stay, older ones may be dropped to make room. Zero means
	// no entry is dropped for its rank; negative is invalid.
	MaxEntries int
	// TTL lets a write drop entries created at least TTL ago when the
	// object would otherwise exceed MaxObjectBytes. Zero means no entry is
	// dropped for its age; negative is invalid.
	TTL time.Duration
}

// Driver is a backend.Driver that keeps each agent's records in the
// ConfigMap agent-memory-<agent-name>; see the package documentation for
// the layout. It is safe for concurrent use, also by several Drivers (in
// several processes) over the same namespace.
type Driver struct {
	ns     string
	cms    typedcorev1.ConfigMapInterface
	clock  backend.Clock
	log    *slog.Logger
	max    int
	ttl    time.Duration
	closed atomic.Bool
}

var _ backend.Driver = (*Driver)(nil)

// New returns a Driver over opt.Client. It fails with
// memory.ErrInvalidArgument for a nil client, an invalid namespace or a
// negative MaxEntries or TTL. It makes no API call.
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
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &Driver{
		ns:    opt.Namespace,
		cms:   opt.Client.ConfigMaps(opt.Namespace),
		clock: opt.Clock,
		log:   opt.Logger,
		max:   opt.MaxEntries,
		ttl:   opt.TTL,
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
