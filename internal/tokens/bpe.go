package tokens

import (
	"math/bits"
	"slices"
	"sync"
)

// Byte-pair encoding of one piece, as tiktoken defines it: the piece
// starts as one part per byte; while some two adjacent parts join into a
// token, the join with the lowest rank is made, the leftmost of equal
// ranks first. A piece that is a token is that one token outright.
// Only the number of parts at the end is needed here.

// smallPiece is the longest piece merged by rescanning its parts after
// every join (quadratic, but with no set-up); longer pieces use a heap.
const smallPiece = 48

// countPiece returns the number of tokens piece encodes to. The work
// counter w is charged with the joins a long piece needs, so a count
// honours cancellation inside one long piece too.
func (v *vocab) countPiece(piece string, w *work) (int, error) {
	switch {
	case len(piece) == 1:
		return 1, nil
	case len(piece) == 2:
		if v.pair[uint16(piece[0])<<8|uint16(piece[1])] != noRank {
			return 1, nil
		}
		return 2, nil
	case v.rank(piece) != noRank:
		return 1, nil
	case len(piece) <= smallPiece:
		return v.mergeSmall(piece), nil
	}
	return v.mergeLong(piece, w)
}

// mergeSmall merges a piece of at most smallPiece bytes. part[k] is the
// start of the k-th part and rank[k] the rank of joining parts k and k+1.
func (v *vocab) mergeSmall(piece string) int {
	var start [smallPiece + 1]uint8
	var rank [smallPiece]uint32
	n := len(piece)
	for k := range n {
		start[k] = uint8(k)
	}
	start[n] = uint8(n)
	for k := range n - 1 {
		rank[k] = v.pair[uint16(piece[k])<<8|uint16(piece[k+1])]
	}
	parts := n
	for parts > 1 {
		best, at := noRank, -1
		for k := range parts - 1 {
			if rank[k] < best {
				best, at = rank[k], k
			}
		}
		if at < 0 {
			break
		}
		// Join parts at and at+1: drop start[at+1] and rank[at+1],
		// then rerank the joins that now include the new part.
		copy(start[at+1:parts], start[at+2:parts+1])
		copy(rank[at+1:parts-1], rank[at+2:parts])
		parts--
		if at+1 < parts {
			rank[at] = v.rank(piece[start[at]:start[at+2]])
		}
		if at > 0 {
			rank[at-1] = v.rank(piece[start[at-1]:start[at+1]])
		}
	}
	return parts
}

// longState is the scratch space of mergeLong, kept for reuse because a
// long piece needs several arrays of its own length.
type longState struct {
	node []node
	// memo caches the joins of two tokens, keyed by their ranks
	// (memoKey, 0 when empty), as long pieces repeat the same joins.
	memoKey []uint64
	memoVal []uint32
	// bucketOf[r] is 1 + the index in buckets of the positions waiting to
	// join at rank r, or 0; it is as long as the vocabulary and is reset
	// after each piece through used.
	bucketOf []int32
	buckets  [][]int32
	// spare holds emptied bucket arrays for reuse, by log2 of capacity,
	// so that growing and finishing buckets makes no garbage.
	spare   [32][][]int32
	used    []uint32 // the ranks with a bucket not yet walked, as a min-heap
	touched []uint32 // the ranks with a bucket
	urgent  []uint64 // joins of rank at most the current one, as a min-heap
}

// memoBits is log2 of the most joins mergeLong caches.
const memoBits = 16

// node is a part of a piece being merged, indexed by its start; the
// fields sit together because a join reads and writes them together.
type node struct {
	next, prev int32  // the starts of the parts after and before
	rank       uint32 // of joining the part with the next, or noRank
	tok        uint32 // the token the part is
}

var longPool = sync.Pool{New: func() any { return new(longState) }}

// joinsPerPoll is how many joins mergeLong considers between looks at the
// context.
const joinsPerPoll = 1 << 14

// mergeLong merges a piece of any length in O(n log n). The parts are a
// linked list over their start offsets. The candidate joins wait in
// buckets, one per rank, taken lowest rank first and each sorted by start
// when its turn comes, so joins are made in tiktoken's order: lowest
// rank, then leftmost. A join made at rank r creates candidates only at
// or left of its own start, so those of rank r or less, which must come
// before the rest of the current bucket, go to a small heap (urgent)
// instead, and the two are merged as the bucket is walked. A candidate
// goes stale when either of its parts changes; it is skipped when its
// turn comes, by checking that its part still starts there and still
// joins at that rank. Buckets keep the walk sequential in memory, which
// one heap of all candidates (as long as the piece) is not.
func (v *vocab) mergeLong(piece string, w *work) (int, error) {
	n := len(piece)
	st := longPool.Get().(*longState)
	defer longPool.Put(st)
	st.node = grow(st.node, n+1)
	nd := st.node
	if st.memoKey == nil {
		st.memoKey = make([]uint64, 1<<memoBits)
		st.memoVal = make([]uint32, 1<<memoBits)
	}
	// The memo grows with the piece, up to 1<<memoBits joins, so that a
	// short piece does not clear a large memo.
	memoLog := min(max(bits.Len(uint(n)), 8), memoBits)
	memoKey, memoVal := st.memoKey[:1<<memoLog], st.memoVal[:1<<memoLog]
	clear(memoKey)
	shift := 64 - memoLog
	if len(st.bucketOf) < v.size() {
		st.bucketOf = make([]int32, v.size())
	}
	bucketOf := st.bucketOf
	buckets := st.buckets[:0]
	used := st.used[:0]
	urgent := st.urgent[:0]
	touched := st.touched[:0]
	var walk []int32 // the bucket being walked, sorted
	defer func() {
		st.release(walk)
		for _, r := range touched {
			bucketOf[r] = 0
		}
		for i := range buckets {
			st.release(buckets[i])
			buckets[i] = nil
		}
		st.buckets, st.used, st.urgent, st.touched = buckets[:0], used[:0], urgent[:0], touched[:0]
	}()

	cur := uint32(0) // the rank of the bucket being walked
	// wait queues the join of the part at a, of rank r.
	wait := func(r uint32, a int32) {
		if r <= cur {
			urgent = heapPush(urgent, uint64(r)<<32|uint64(a))
			return
		}
		b := bucketOf[r]
		if b == 0 {
			buckets = append(buckets, st.take(3))
			b = int32(len(buckets))
			bucketOf[r] = b
			used = heapPush(used, r)
			touched = append(touched, r)
		}
		q := buckets[b-1]
		if len(q) == cap(q) {
			bigger := st.take(bits.Len(uint(cap(q))))[:len(q)]
			copy(bigger, q)
			st.release(q)
			q = bigger
		}
		buckets[b-1] = append(q, a)
	}
	for k := range n {
		nd[k] = node{next: int32(k + 1), prev: int32(k - 1), rank: noRank, tok: v.byteRank[piece[k]]}
	}
	nd[n] = node{next: int32(n + 1), prev: int32(n - 1), rank: noRank, tok: noRank}
	for k := 0; k+1 < n; k++ {
		if r := v.pair[uint16(piece[k])<<8|uint16(piece[k+1])]; r != noRank {
			nd[k].rank = r
			wait(r, int32(k))
		}
	}
	// rerank sets and queues the rank of joining the part at a with the
	// one after it.
	rerank := func(a int32) {
		b := nd[a].next
		if int(b) >= n {
			nd[a].rank = noRank
			return
		}
		key := (uint64(nd[a].tok)<<32 | uint64(nd[b].tok)) + 1
		m := (key * 0x9E3779B97F4A7C15) >> shift
		var r uint32
		if memoKey[m] == key {
			r = memoVal[m]
		} else {
			r = v.rank(piece[a:nd[b].next])
			memoKey[m], memoVal[m] = key, r
		}
		nd[a].rank = r
		if r != noRank {
			wait(r, a)
		}
	}

	parts := n
	wi := 0
	for seen := 0; ; seen++ {
		if seen == joinsPerPoll {
			seen = 0
			if err := w.add(joinsPerPoll); err != nil {
				return 0, err
			}
		}
		var a int32
		var r uint32
		switch {
		case len(urgent) > 0 && (wi == len(walk) || urgent[0] < uint64(cur)<<32|uint64(walk[wi])):
			var top uint64
			top, urgent = heapPop(urgent)
			a, r = int32(uint32(top)), uint32(top>>32)
		case wi < len(walk):
			a, r = walk[wi], cur
			wi++
		case len(used) > 0:
			cur, used = heapPop(used)
			st.release(walk) // the bucket walked last
			i := bucketOf[cur] - 1
			walk, buckets[i] = buckets[i], nil
			slices.Sort(walk)
			wi = 0
			continue
		default:
			return parts, nil
		}
		if nd[a].rank != r {
			continue // stale: a was joined into its left neighbour, or reranked
		}
		b := nd[a].next
		c := nd[b].next
		nd[a].next = c
		nd[c].prev = a
		nd[b].rank = noRank
		nd[a].tok = r
		parts--
		rerank(a)
		if a > 0 {
			rerank(nd[a].prev)
		}
	}
}

// take returns an empty bucket array of capacity 1<<c.
func (st *longState) take(c int) []int32 {
	if k := len(st.spare[c]); k > 0 {
		q := st.spare[c][k-1]
		st.spare[c] = st.spare[c][:k-1]
		return q
	}
	return make([]int32, 0, 1<<c)
}

// release keeps q, of a power-of-two capacity, for take.
func (st *longState) release(q []int32) {
	if q == nil {
		return
	}
	c := bits.Len(uint(cap(q))) - 1
	st.spare[c] = append(st.spare[c], q[:0])
}

// grow returns s resized to n, reusing its array when it is big enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// A 4-ary min-heap of keys, kept shallow (a quarter of a binary heap's
// height) because the heap of a long piece outgrows the caches.

// heapKey is a key of the heap: the merge keeps one heap of 64-bit keys
// and one of 32-bit ranks.
type heapKey interface{ ~uint32 | ~uint64 }

func heapPush[K heapKey](h []K, x K) []K {
	h = append(h, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= x {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	return h
}

func heapPop[K heapKey](h []K) (K, []K) {
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	if last == 0 {
		return top, h
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= last {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < last; k++ {
			if h[k] < h[m] {
				m = k
			}
		}
		if h[m] >= x {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
	return top, h
}
