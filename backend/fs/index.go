package fs

import (
	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/recindex"
)

// entry is one stored record as the index holds it; its Extra is what the
// log knows about it.
type entry = recindex.Entry[logged, struct{}]

// logged is the log's bookkeeping of a stored record.
type logged struct {
	size int64 // bytes of the record's encoding in the log
}

// index is a replica of the log's state in memory: every live record, by
// tenant and id and by identity field (recindex), the store's vector
// dimension and the bytes of live record encodings (to decide
// compaction).
type index struct {
	recs *recindex.Index[logged, struct{}]
	dims int
	live int64
	// format is the format of the log the index reads. For a format-1
	// log, whose tombstones name ids alone, tenantOf finds the tenant
	// holding a live id (ids were unique per store then).
	format   int
	tenantOf map[string]string
}

// idKey is what record ids are unique under: a tenant and an id.
type idKey struct{ tenant, id string }

func newIndex(h logHeader) *index {
	x := &index{recs: recindex.New[logged, struct{}](), dims: h.dims, format: h.format}
	if h.format == logFormatIDOnly {
		x.tenantOf = map[string]string{}
	}
	return x
}

// put adds e, written by who, replacing any entry its tenant holds under
// its id.
func (x *index) put(e *entry, who memory.Identity) {
	if old := x.recs.Put(e, who); old != nil {
		x.live -= old.Extra.size
	}
	if e.Vector != nil && x.dims == 0 {
		x.dims = len(e.Vector)
	}
	if x.tenantOf != nil {
		x.tenantOf[e.ID] = who.Tenant
	}
	x.live += e.Extra.size
}

// remove drops e from the index.
func (x *index) remove(e *entry) {
	x.recs.Remove(e)
	if x.tenantOf != nil {
		delete(x.tenantOf, e.ID)
	}
	x.live -= e.Extra.size
}

// apply applies a decoded operation.
func (x *index) apply(op decoded) {
	for _, r := range op.puts {
		x.put(r.e, r.who)
	}
	for _, k := range op.deletes {
		if x.tenantOf != nil {
			k.tenant = x.tenantOf[k.id]
		}
		if e := x.recs.Get(k.tenant, k.id); e != nil {
			x.remove(e)
		}
	}
}
