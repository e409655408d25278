package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentmem/memory"
)

// encodeWords are the test texts' words, with stopwords and repeats.
var encodeWords = strings.Fields("parcel parcels late delivery order refund the a is of tea green coffee café naïve 2024 again")

func encodeText(rnd *rand.Rand) string {
	ws := make([]string, rnd.IntN(15))
	for i := range ws {
		ws[i] = encodeWords[rnd.IntN(len(encodeWords))]
	}
	return strings.Join(ws, " ")
}

// sameSearches checks that a and b rank every query alike.
func sameSearches(t *testing.T, what string, a, b *Index[int], rnd *rand.Rand) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("%s: %d documents, want %d", what, b.Len(), a.Len())
	}
	for i := range 30 {
		q := NewQuery(encodeText(rnd))
		q.Tags = uint64(i % 4) // tags 0 and 1 both, 0 alone, 1 alone, all
		if i%4 == 3 {
			q.Tags = 0
		}
		sa, sb := a.Stats(&q), b.Stats(&q)
		if fmt.Sprint(sa) != fmt.Sprint(sb) {
			t.Fatalf("%s: Stats %v, want %v", what, sb, sa)
		}
		ha, err := a.Search(&q, DefaultParams(), NewTopK(10, byID), nil)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.Search(&q, DefaultParams(), NewTopK(10, byID), nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ha) != fmt.Sprint(hb) {
			t.Fatalf("%s: hits %v, want %v", what, hb, ha)
		}
	}
}

// TestEncodeRoundTrip checks that a decoded index searches as the one
// encoded — after removals, compactions and re-adds — that it encodes to
// the same bytes again, and that it can be changed further as the
// original can.
func TestEncodeRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	x := NewIndex[int]()
	for i := range 2000 {
		x.AddTagged(i, encodeText(rnd), uint8(i%2))
		if rnd.IntN(3) == 0 {
			x.Remove(rnd.IntN(i + 1))
		}
	}
	data, refs := x.Encode(nil)
	if len(refs) != x.Len() {
		t.Fatalf("Encode returned %d references for %d documents", len(refs), x.Len())
	}
	y, err := DecodeIndex(data, refs)
	if err != nil {
		t.Fatalf("DecodeIndex of what Encode wrote: %v", err)
	}
	y.SetTags(func(ref int) uint8 { return uint8(ref % 2) }) // the encoding keeps none
	checkAccounts(t, 0, y.corpus)
	sameSearches(t, "the decoded index", x, y, rnd)
	again, _ := y.Encode(nil)
	if !bytes.Equal(again, data) {
		t.Errorf("the decoded index encodes to %d other bytes (of %d)", len(again), len(data))
	}
	for i := range 500 {
		text := encodeText(rnd)
		id := 5000 + i
		x.AddTagged(id, text, uint8(id%2))
		y.AddTagged(id, text, uint8(id%2))
		r := rnd.IntN(5500)
		if x.Remove(r) != y.Remove(r) {
			t.Fatalf("Remove(%d) disagrees between the original and the decoded index", r)
		}
	}
	checkAccounts(t, 1, y.corpus)
	sameSearches(t, "the decoded index after changes", x, y, rnd)
	empty, refs := NewIndex[int]().Encode(nil)
	if z, err := DecodeIndex(empty, refs); err != nil || z.Len() != 0 {
		t.Errorf("DecodeIndex of an empty index = %v, %v", z, err)
	}
}

// TestDecodeIndexRefuses checks that malformed encodings are refused with
// memory.ErrInvalidArgument, among them counts no input could hold.
func TestDecodeIndexRefuses(t *testing.T) {
	x := NewIndex[int]()
	x.Add(0, "parcel late")
	x.Add(1, "parcel tea tea")
	good, refs := x.Encode(nil)
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	head := []byte(indexMagic + string(rune(indexFormat)))
	// enc returns an encoding of one document of length l holding the
	// given terms, each once, with postings the total counted and the
	// postings written gap and tf each; it is valid for l 1, one term
	// "a", total 1 and posting (0, 1).
	enc := func(l uint64, total uint64, terms []string, posting ...uint64) []byte {
		b := append(bytes.Clone(head), uv(1, l, uint64(len(terms)), total)...)
		for _, t := range terms {
			b = append(b, uv(uint64(len(t)))...)
			b = append(b, t...)
			b = append(b, uv(posting...)...)
		}
		return b
	}
	cases := []struct {
		name string
		data []byte
		refs []int
	}{
		{"empty", nil, nil},
		{"another magic", append([]byte("LXJ\x01"), good[4:]...), refs},
		{"another format", append([]byte("LXI\x09"), good[4:]...), refs},
		{"too few references", good, refs[:1]},
		{"too many references", good, []int{0, 1, 2}},
		{"repeated references", good, []int{7, 7}},
		{"cut short", good[:len(good)-1], refs},
		{"a byte left over", append(bytes.Clone(good), 0), refs},
		{"an overlong varint", append(bytes.Clone(head), 0x81, 0x00), nil},
		{"2^62 documents", append(bytes.Clone(head), uv(1<<62)...), nil},
		{"2^40 terms", append(bytes.Clone(head), uv(0, 1<<40)...), nil},
		{"2^40 postings in all", append(bytes.Clone(head), uv(1, 1, 1, 1<<40)...), []int{0}},
		{"2^40 postings of a term", enc(1, 1, []string{"a"}, 1<<40), []int{0}},
		{"fewer postings than counted", enc(1, 2, []string{"a"}, 1, 0, 1), []int{0}},
		{"more postings than counted", enc(2, 1, []string{"a", "b"}, 1, 0, 1), []int{0}},
		{"an empty term", enc(1, 1, []string{""}, 1, 0, 1), []int{0}},
		{"a term held by no document", enc(1, 1, []string{"a"}, 0, 0, 0), []int{0}},
		{"a posting beyond the documents", enc(1, 1, []string{"a"}, 1, 1, 1), []int{0}},
		{"a frequency of 0", enc(1, 1, []string{"a"}, 1, 0, 0), []int{0}},
		{"a frequency above the length", enc(1, 1, []string{"a"}, 1, 0, 2), []int{0}},
		{"a length its terms do not add up to", enc(2, 1, []string{"a"}, 1, 0, 1), []int{0}},
		{"terms out of order", enc(2, 2, []string{"b", "a"}, 1, 0, 1), []int{0}},
		{"a term twice", enc(2, 2, []string{"a", "a"}, 1, 0, 1), []int{0}},
	}
	for _, c := range cases {
		_, err := DecodeIndex(c.data, c.refs)
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("DecodeIndex of %s = %v, want ErrInvalidArgument", c.name, err)
		}
	}
	if _, err := DecodeIndex(enc(1, 1, []string{"a"}, 1, 0, 1), []int{0}); err != nil {
		t.Errorf("the hand-made index the cases above break: %v", err)
	}
}

// FuzzDecodeIndex checks that DecodeIndex refuses or accepts any input
// without panicking, and that what it accepts is an index that searches,
// encodes to the same bytes again and takes further changes.
func FuzzDecodeIndex(f *testing.F) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for n := range 4 {
		x := NewIndex[int]()
		for i := range n * 3 {
			x.Add(i, encodeText(rnd))
		}
		data, refs := x.Encode(nil)
		f.Add(data, uint16(len(refs)))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		refs := make([]int, n)
		for i := range refs {
			refs[i] = i
		}
		x, err := DecodeIndex(data, refs)
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) {
				t.Fatalf("DecodeIndex failed with %v, not ErrInvalidArgument", err)
			}
			return
		}
		again, _ := x.Encode(nil)
		if !bytes.Equal(again, data) {
			t.Fatalf("an accepted encoding encodes again to other bytes")
		}
		q := NewQuery("parcel a b tea")
		if _, err := x.Search(&q, DefaultParams(), NewTopK(5, byID), nil); err != nil {
			t.Fatal(err)
		}
		x.Add(int(n)+1, "parcel tea")
		x.Remove(0)
	})
}

// TestAnalyzerVersion checks that the version is stable within a process
// and names the hand-kept revision.
func TestAnalyzerVersion(t *testing.T) {
	v := AnalyzerVersion()
	if v == "" || v != AnalyzerVersion() || !strings.HasPrefix(v, fmt.Sprint(analysisRevision)+"-") {
		t.Errorf("AnalyzerVersion() = %q, %q", v, AnalyzerVersion())
	}
}
