package embedding

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/agentmem/memory"
)

// DefaultCacheBytes is the size of a cache whose CacheOptions.MaxBytes is
// zero: 16 MiB, about 2,700 vectors of 1,536 dimensions.
const DefaultCacheBytes = 16 << 20

// entryOverhead is what one cache entry costs besides its vector's values:
// the key, the list element and the map slot, roughly.
const entryOverhead = 128

// CacheOptions configure a Cache. The zero value is the documented default.
type CacheOptions struct {
	// MaxBytes bounds the vectors held, counted as 4 bytes a value plus
	// a fixed overhead an entry; zero means DefaultCacheBytes. When a new
	// vector does not fit, the least recently used ones are dropped.
	MaxBytes int
}

// CacheStats are a Cache's counters.
type CacheStats struct {
	Hits, Misses int64 // texts found in the cache, and texts sent to the model
	Entries      int   // vectors held
	Bytes        int   // their size, as MaxBytes counts it
}

// Cache is a memory.QueryEmbedder that remembers the vectors of the model
// it wraps by content hash — SHA-256 of the model name, whether the text
// is a query, and the text — so a text embedded once is not sent to the
// model again while its vector is cached. Identical texts within one call
// are sent once. It is bounded (CacheOptions.MaxBytes, least recently
// used first out) and safe for concurrent use; two calls that miss on the
// same text at the same time may both send it to the model.
//
// Vectors are copied in and out, so callers may modify what they get.
type Cache struct {
	e   memory.Embedder
	max int

	mu     sync.Mutex
	items  map[[32]byte]*list.Element
	lru    list.List // of *cacheEntry, most recently used first
	bytes  int
	hits   int64
	misses int64
}

type cacheEntry struct {
	key [32]byte
	vec []float32
}

var _ memory.QueryEmbedder = (*Cache)(nil)

// NewCache returns a cache in front of e.
func NewCache(e memory.Embedder, opt CacheOptions) *Cache {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultCacheBytes
	}
	return &Cache{e: e, max: opt.MaxBytes, items: map[[32]byte]*list.Element{}}
}

// Model returns the wrapped embedder's model.
func (c *Cache) Model() string { return c.e.Model() }

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Entries: len(c.items), Bytes: c.bytes}
}

// key hashes the model name, the purpose and the text, each length-prefixed.
func key(model string, query bool, text string) [32]byte {
	h := sha256.New()
	var n [9]byte
	binary.BigEndian.PutUint64(n[:8], uint64(len(model)))
	h.Write(n[:8])
	h.Write([]byte(model))
	if query {
		n[8] = 1
	}
	binary.BigEndian.PutUint64(n[:8], uint64(len(text)))
	h.Write(n[:])
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Embed returns the vectors of texts, sending to the model only the texts
// it has not cached, once each, in one call. The model's output is checked
// with memory.CheckEmbeddings before anything is cached or returned.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	model := c.e.Model()
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var miss []string         // distinct texts to embed
	pos := map[[32]byte]int{} // key → index in miss
	c.mu.Lock()
	for i, t := range texts {
		k := key(model, false, t)
		keys[i] = k
		if v, ok := c.get(k); ok {
			out[i] = v
			c.hits++
			continue
		}
		if _, ok := pos[k]; !ok {
			pos[k] = len(miss)
			miss = append(miss, t)
		}
	}
	c.misses += int64(len(miss))
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vecs, err := c.e.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	if err := memory.CheckEmbeddings(len(miss), vecs); err != nil {
		return nil, err
	}
	if len(out) > 0 && len(miss) < len(texts) {
		for i := range out {
			if out[i] != nil && len(out[i]) != len(vecs[0]) {
				return nil, memory.Errorf(memory.ErrInvalidArgument, "model %q returned vectors of %d dimensions; it returned %d for texts cached earlier", model, len(vecs[0]), len(out[i]))
			}
		}
	}
	c.mu.Lock()
	for k, j := range pos {
		c.put(k, vecs[j])
	}
	c.mu.Unlock()
	for i := range out {
		if out[i] == nil {
			out[i] = slices.Clone(vecs[pos[keys[i]]])
		}
	}
	return out, nil
}

// EmbedQuery returns the vector of a search query: the wrapped embedder's
// EmbedQuery when it is a memory.QueryEmbedder, cached apart from document
// vectors, and otherwise the text's document vector, as Embed returns it.
func (c *Cache) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	qe, ok := c.e.(memory.QueryEmbedder)
	if !ok {
		v, err := c.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return v[0], nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	k := key(c.e.Model(), true, text)
	c.mu.Lock()
	v, hit := c.get(k)
	if hit {
		c.hits++
	} else {
		c.misses++
	}
	c.mu.Unlock()
	if hit {
		return v, nil
	}
	v, err := qe.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	if err := memory.CheckEmbeddings(1, [][]float32{v}); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.put(k, v)
	c.mu.Unlock()
	return slices.Clone(v), nil
}

// get returns a copy of the cached vector of k, marking it used. c.mu is held.
func (c *Cache) get(k [32]byte) ([]float32, bool) {
	el, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return slices.Clone(el.Value.(*cacheEntry).vec), true
}

// put caches a copy of v under k, dropping the least recently used
// entries until it fits. A vector larger than the whole cache is not
// cached. c.mu is held.
func (c *Cache) put(k [32]byte, v []float32) {
	size := 4*len(v) + entryOverhead
	if size > c.max {
		return
	}
	if el, ok := c.items[k]; ok {
		c.lru.MoveToFront(el)
		return
	}
	for c.bytes+size > c.max {
		el := c.lru.Back()
		e := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.items, e.key)
		c.bytes -= 4*len(e.vec) + entryOverhead
	}
	c.items[k] = c.lru.PushFront(&cacheEntry{key: k, vec: slices.Clone(v)})
	c.bytes += size
}
