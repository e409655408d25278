package postgres

import (
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/lib/pq"

	"github.com/agentmem/memory/backend/driver"
)

// maxShortScopes bounds how many scopes a driver remembers as short.
const maxShortScopes = 4096

// shortScopes remembers the scopes (the conditions of a driver.Query)
// whose search through the HNSW index, without an iterative scan, came up
// short: the first ef_search candidates of the graph walk held fewer than
// k records of the scope. A search of such a scope for k or more results
// starts with an iterative scan; any other starts without one, which
// saves pgvector the bookkeeping of every candidate it passes over (about
// an eighth of a search; BENCHMARKS.md) and returns the same rows, since
// an iterative scan's first batch is exactly that walk.
//
// A scope is remembered with the least k it came up short for, and is
// never forgotten but to make room: when full, an arbitrary entry goes.
// A scope that has since grown only keeps paying for the iterative scan.
// Scopes are remembered by a 64-bit hash of their key, so that a scope
// naming many ids costs no more room than another; two scopes whose keys
// collide can only make a search start with an iterative scan or without
// one, never change its rows.
type shortScopes struct {
	mu    sync.Mutex
	least map[uint64]int
}

// scopeSeed seeds the hashes of scope keys.
var scopeSeed = maphash.MakeSeed()

// short reports whether a search of key for k results came up short
// before, for k or fewer.
func (s *shortScopes) short(key string, k int) bool {
	h := maphash.String(scopeSeed, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	least, ok := s.least[h]
	return ok && k >= least
}

// remember records that a search of key for k results came up short.
func (s *shortScopes) remember(key string, k int) {
	h := maphash.String(scopeSeed, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if least, ok := s.least[h]; ok {
		s.least[h] = min(least, k)
		return
	}
	if s.least == nil {
		s.least = make(map[uint64]int)
	}
	if len(s.least) >= maxShortScopes {
		for old := range s.least {
			delete(s.least, old)
			break
		}
	}
	s.least[h] = k
}

// scopeKey returns the text that identifies q's conditions: its WHERE
// clause and, quoted, the values of its parameters.
func scopeKey(q driver.Query) string {
	var b strings.Builder
	args := where(&b, q)
	for _, a := range args {
		b.WriteByte(0)
		switch v := a.(type) {
		case string:
			b.WriteString(strconv.Quote(v))
		case pq.StringArray:
			for _, s := range v {
				b.WriteString(strconv.Quote(s))
				b.WriteByte(',')
			}
		default:
			fmt.Fprintf(&b, "%T:%v", v, v)
		}
	}
	return b.String()
}
