package qdrant

import (
	"context"
	"math"
	"net"
	"strconv"
	"sync"

	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Options configure a Driver.
type Options struct {
	// Client is the Qdrant client the driver calls. It is required by
	// New, and the driver never closes it: its owner does, after Close.
	// Open makes one and leaves this field nil.
	Client *qc.Client
	// Collection is the collection holding the store's records: one
	// collection per store. New creates it, with its payload indexes,
	// when it does not exist. It is required.
	Collection string
	// Clock decides expiry; nil means time.Now.
	Clock memory.Clock
	// Dims is the dimension of the store's vectors. Qdrant fixes a
	// collection's vector size when the collection is created, so the
	// dimension comes from here rather than from the first vector
	// stored: New creates the collection with a dense vector of Dims
	// values, and a record or query vector of another dimension is
	// memory.ErrInvalidArgument. 0 opens an existing collection with the
	// dimension it has, and creates a collection without dense vectors,
	// whose records cannot carry one. An existing collection of another
	// dimension is memory.ErrInvalidArgument.
	Dims int
	// ExactSearch makes every vector search exact: Qdrant scores every
	// point the query's filter matches instead of walking its HNSW
	// graph. Without it a search is approximate where Qdrant's planner
	// chooses the graph (large filtered sets) and exact where it does
	// not (small ones, below its full-scan threshold).
	ExactSearch bool
	// TextLength is the average length, in terms (the lexical engine's
	// Analyze), that the text search normalises lengths by; 0 means
	// DefaultTextLength. A record's sparse vector is weighed with it
	// when the record is written, so every driver on one collection
	// must use the same value.
	TextLength float64
}

// DefaultTextLength is the average text length, in terms, the text
// search normalises lengths by unless Options.TextLength says otherwise:
// the order of a conversation turn or a fact once stopwords are dropped.
const DefaultTextLength = 10

// Driver is a driver.Driver and driver.Sweeper over one Qdrant
// collection. It is safe for concurrent use; see the package
// documentation for what it guarantees.
type Driver struct {
	client *qc.Client
	own    bool // the driver made client (Open) and closes it
	coll   string
	clock  memory.Clock

	// mu is held for reading by every call while it uses the client and
	// for writing by Close, so a call never runs on a closed client.
	mu     sync.RWMutex
	closed bool

	dims    int     // the store's vector dimension; 0: no dense vectors
	exact   bool    // Options.ExactSearch
	textLen float64 // Options.TextLength, or DefaultTextLength

	queue *workState // the work queue's state between calls

	// beforeWrite, when set (by tests), runs between a write's read of
	// its points and its upsert.
	beforeWrite func()
}

var (
	_ driver.Driver       = (*Driver)(nil)
	_ driver.Sweeper      = (*Driver)(nil)
	_ driver.VectorRanker = (*Driver)(nil)
	_ driver.TextRanker   = (*Driver)(nil)
	_ driver.Swapper      = (*Driver)(nil)
	_ driver.Claimer      = (*Driver)(nil)
	_ driver.WorkEraser   = (*Driver)(nil)
)

// maxRecvBytes is the largest response the driver accepts: pages of
// records of up to 1 MiB of content each are larger than grpc-go's
// default of 4 MiB.
const maxRecvBytes = 1 << 30

// recvOpt raises the receive limit of the calls that return records.
var recvOpt = grpc.MaxCallRecvMsgSize(maxRecvBytes)

// New returns a driver over opt.Collection through opt.Client, creating
// the collection and its payload indexes when it does not exist, and the
// indexes it lacks when it does.
func New(ctx context.Context, opt Options) (*Driver, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opt.Client == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "qdrant: Options.Client is nil")
	}
	if opt.Collection == "" || len(opt.Collection) > maxCollection {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "qdrant: Options.Collection must be 1 to %d bytes (Qdrant's 255 less the work queue collection's suffix %q), got %d", maxCollection, workSuffix, len(opt.Collection))
	}
	if opt.Dims < 0 || opt.Dims > memory.MaxVectorDims {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "qdrant: Options.Dims is %d; it must be between 0 and %d", opt.Dims, memory.MaxVectorDims)
	}
	if !(opt.TextLength >= 0 && opt.TextLength <= math.MaxFloat32) {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "qdrant: Options.TextLength is %v; it must be finite and not negative", opt.TextLength)
	}
	d := &Driver{client: opt.Client, coll: opt.Collection, clock: opt.Clock, dims: opt.Dims, exact: opt.ExactSearch, textLen: opt.TextLength, queue: newWorkState()}
	if d.textLen == 0 {
		d.textLen = DefaultTextLength
	}
	if err := d.ensureCollection(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Open connects to the Qdrant gRPC endpoint addr ("host:port", port 6334
// by default), without TLS or API key, and returns a driver over
// opt.Collection as New does; opt.Client must be nil. The driver owns the
// client it made and closes it in Close. For TLS, an API key or other
// client settings, make the client and call New.
func Open(ctx context.Context, addr string, opt Options) (*Driver, error) {
	if opt.Client != nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "qdrant: Open makes its own client; use New with Options.Client")
	}
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	client, err := qc.NewClient(&qc.Config{
		Host: host, Port: port, PoolSize: 1,
		GrpcOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(recvOpt, grpc.MaxCallSendMsgSize(math.MaxInt32))},
	})
	if err != nil {
		return nil, memory.Wrap(memory.ErrInvalidArgument, err, "qdrant: client for "+addr)
	}
	opt.Client = client
	d, err := New(ctx, opt)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	d.own = true
	return d, nil
}

// splitAddr reads "host:port" or "host" (port 6334).
func splitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		if addr == "" {
			return "", 0, memory.Errorf(memory.ErrInvalidArgument, "qdrant: empty address")
		}
		return addr, 6334, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, memory.Errorf(memory.ErrInvalidArgument, "qdrant: bad port in address %q", addr)
	}
	return host, port, nil
}

// Collection returns the name of the driver's collection.
func (d *Driver) Collection() string { return d.coll }

// Close marks the driver closed, waiting for the calls in flight, and
// closes the client when Open made it. It is idempotent; every later call
// fails with memory.ErrClosed.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.own {
		if err := d.client.Close(); err != nil {
			return memory.Wrap(memory.ErrClosed, err, "qdrant: closing the client")
		}
	}
	return nil
}

// admit starts a call that reads the driver's clock: it refuses invalid
// input (invalid, when not nil) and a done context as driver.Admit does,
// then enters as enter does, returning the clock's time in unix
// nanoseconds and the function that ends the call.
func (d *Driver) admit(ctx context.Context, invalid error) (now int64, leave func(), err error) {
	if now, err = driver.Admit(ctx, invalid, d.clock); err != nil {
		return 0, nil, err
	}
	if leave, err = d.enter(); err != nil {
		return 0, nil, err
	}
	return now, leave, nil
}

// enter starts a call: it fails with memory.ErrClosed after Close, and
// otherwise holds d.mu for reading until the returned function runs.
func (d *Driver) enter() (func(), error) {
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return nil, memory.Errorf(memory.ErrClosed, "qdrant driver is closed")
	}
	return d.mu.RUnlock, nil
}

// points returns the Points service client.
func (d *Driver) points() qc.PointsClient { return d.client.GetPointsClient() }

// Payload index types, for ensureCollection.
type index struct {
	field string
	typ   qc.FieldType
	param *qc.PayloadIndexParams
}

// keywordIndex, intIndex and boolIndex are payload indexes of each kind;
// a tenant keyword index is flagged is_tenant, so Qdrant keeps each
// tenant's points together. Integer indexes serve lookups and ranges.
func keywordIndex(field string, tenant bool) index {
	p := &qc.KeywordIndexParams{}
	if tenant {
		p.IsTenant = qc.PtrOf(true)
	}
	return index{field, qc.FieldType_FieldTypeKeyword, qc.NewPayloadIndexParamsKeyword(p)}
}

func intIndex(field string) index {
	return index{field, qc.FieldType_FieldTypeInteger, qc.NewPayloadIndexParamsInt(&qc.IntegerIndexParams{Lookup: qc.PtrOf(true), Range: qc.PtrOf(true)})}
}

func boolIndex(field string) index {
	return index{field, qc.FieldType_FieldTypeBool, qc.NewPayloadIndexParamsBool(&qc.BoolIndexParams{})}
}

// identityIndexes are the keyword indexes of the six identity fields,
// the tenant's flagged is_tenant.
func identityIndexes() []index {
	out := []index{keywordIndex(fTenant, true)}
	for _, f := range identityFields[1:] {
		out = append(out, keywordIndex(f.name, false))
	}
	return out
}

// indexes lists the payload indexes the driver's filters use.
func indexes() []index {
	return append(identityIndexes(),
		keywordIndex(fRecordID, false), keywordIndex(fKind, false), keywordIndex(fKey, false), keywordIndex(fDel, false),
		index{fTerms, qc.FieldType_FieldTypeText, qc.NewPayloadIndexParamsText(&qc.TextIndexParams{Tokenizer: qc.TokenizerType_Whitespace, Lowercase: qc.PtrOf(false)})},
		boolIndex(fDead), boolIndex(fHasText),
		intIndex(fCreated), intIndex(fExpSec), intIndex(fExpNano), intIndex(fDelAt),
	)
}

// createIndexes creates, in collection coll, the indexes of want that
// its payload schema have lacks, and reports how many it created.
func (d *Driver) createIndexes(ctx context.Context, coll string, have map[string]*qc.PayloadSchemaInfo, want []index) (int, error) {
	n := 0
	for _, ix := range want {
		if _, ok := have[ix.field]; ok {
			continue
		}
		_, err := d.points().CreateFieldIndex(ctx, &qc.CreateFieldIndexCollection{
			CollectionName: coll, Wait: qc.PtrOf(true), FieldName: ix.field,
			FieldType: qc.PtrOf(ix.typ), FieldIndexParams: ix.param,
			Ordering: strong(),
		})
		if err != nil {
			return n, classify(ctx, err, "qdrant: creating the payload index on "+ix.field+" of collection "+strconv.Quote(coll))
		}
		n++
	}
	return n, nil
}

// ensureCollection creates the collection when it is missing, and the
// payload indexes it lacks.
func (d *Driver) ensureCollection(ctx context.Context) error {
	cols := d.client.GetCollectionsClient()
	ex, err := cols.CollectionExists(ctx, &qc.CollectionExistsRequest{CollectionName: d.coll})
	if err != nil {
		return classify(ctx, err, "qdrant: does collection "+strconv.Quote(d.coll)+" exist")
	}
	if !ex.GetResult().GetExists() {
		// Named vectors: the dense one when the store has a dimension
		// (else an empty map, as REST's "vectors": {}), and the sparse
		// one of the text search.
		dense := map[string]*qc.VectorParams{}
		if d.dims > 0 {
			dense[vDense] = &qc.VectorParams{Size: uint64(d.dims), Distance: qc.Distance_Cosine}
			// The vector as written: Qdrant keeps a Dot vector as it is
			// given. Read with records, never searched: no HNSW graph
			// (m 0), and on disk.
			dense[vRaw] = &qc.VectorParams{Size: uint64(d.dims), Distance: qc.Distance_Dot,
				HnswConfig: &qc.HnswConfigDiff{M: qc.PtrOf(uint64(0))}, OnDisk: qc.PtrOf(true)}
		}
		_, err := cols.Create(ctx, &qc.CreateCollection{
			CollectionName:      d.coll,
			VectorsConfig:       qc.NewVectorsConfigMap(dense),
			SparseVectorsConfig: qc.NewSparseVectorsConfig(map[string]*qc.SparseVectorParams{vText: {}}),
		})
		if err != nil && kindOf(err) != memory.ErrConflict { // AlreadyExists: another opener won
			return classify(ctx, err, "qdrant: creating collection "+strconv.Quote(d.coll))
		}
	}
	info, err := cols.Get(ctx, &qc.GetCollectionInfoRequest{CollectionName: d.coll})
	if err != nil {
		return classify(ctx, err, "qdrant: reading collection "+strconv.Quote(d.coll))
	}
	if err := d.checkVectors(info.GetResult().GetConfig().GetParams()); err != nil {
		return err
	}
	_, err = d.createIndexes(ctx, d.coll, info.GetResult().GetPayloadSchema(), indexes())
	return err
}

// checkVectors checks an existing collection's named vectors against
// the driver's and adopts the collection's dimension when the options
// named none: a collection's vectors are fixed when it is created.
func (d *Driver) checkVectors(p *qc.CollectionParams) error {
	name := strconv.Quote(d.coll)
	if _, ok := p.GetSparseVectorsConfig().GetMap()[vText]; !ok {
		return memory.Errorf(memory.ErrInvalidArgument, "qdrant: collection %s has no sparse vector %q: it was not made by this driver", name, vText)
	}
	size := 0
	named := p.GetVectorsConfig().GetParamsMap().GetMap()
	if dense, ok := named[vDense]; ok {
		raw := named[vRaw]
		if dense.GetDistance() != qc.Distance_Cosine || raw.GetDistance() != qc.Distance_Dot || raw.GetSize() != dense.GetSize() {
			return memory.Errorf(memory.ErrInvalidArgument, "qdrant: collection %s's vectors are not this driver's: %q must be Cosine, and %q Dot of the same size", name, vDense, vRaw)
		}
		size = int(dense.GetSize())
	}
	switch {
	case d.dims == 0:
		d.dims = size
	case size == 0:
		return memory.Errorf(memory.ErrInvalidArgument, "qdrant: collection %s was created without vectors; Options.Dims is %d, and a collection's vectors are fixed when it is created", name, d.dims)
	case size != d.dims:
		return memory.Errorf(memory.ErrInvalidArgument, "qdrant: collection %s holds vectors of %d dimensions; Options.Dims is %d", name, size, d.dims)
	}
	return nil
}

// strong is the write ordering of every write: through the shard's
// permanent leader.
func strong() *qc.WriteOrdering {
	return &qc.WriteOrdering{Type: qc.WriteOrderingType_Strong}
}
