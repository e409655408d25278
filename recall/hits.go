package recall

import "github.com/agentmem/memory/backend/driver"

// hitSet holds a recall's hits, one per record, in the order they were
// added, and finds them by Ref. A lookup hashes the record's creation
// time, which the Ref holds, rather than its id, and compares ids only
// with the hits created at the same nanosecond: ids lie scattered
// through the drivers' memory, and hashing hundreds of them, each a
// cache miss, took a tenth of a hybrid recall (BENCHMARKS.md). Records
// of one recall share a tenant, so an id names one record.
type hitSet struct {
	first map[int64]int32 // by creation time, the index of the first hit
	hits  []hit
	next  []int32 // next[i]: the next hit created when hits[i] was; -1: none
}

func newHitSet(n int) *hitSet {
	return &hitSet{first: make(map[int64]int32, n), hits: make([]hit, 0, n), next: make([]int32, 0, n)}
}

// find returns the index of ref's record's hit, or -1.
func (s *hitSet) find(ref *driver.Ref) int {
	i, ok := s.first[ref.Created.UnixNano()]
	if !ok {
		return -1
	}
	for ; i >= 0; i = s.next[i] {
		if s.hits[i].ref.ID == ref.ID {
			return int(i)
		}
	}
	return -1
}

// add returns the index of ref's record's hit, adding one of score 0
// whose Ref is ref when there is none.
func (s *hitSet) add(ref *driver.Ref) int {
	t := ref.Created.UnixNano()
	head, ok := s.first[t]
	if ok {
		for i := head; i >= 0; i = s.next[i] {
			if s.hits[i].ref.ID == ref.ID {
				return int(i)
			}
		}
	} else {
		head = -1
	}
	n := len(s.hits)
	s.hits = append(s.hits, hit{ref: ref})
	s.next = append(s.next, head)
	s.first[t] = int32(n)
	return n
}
