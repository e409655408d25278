package tiers

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmem/memory"
)

// indexView mirrors the index file in memory. The first refresh reads it
// whole; later ones read only the lines appended since, and a replaced
// index (compacted or rebuilt) is read whole again.
type indexView struct {
	file   os.FileInfo // the index file read, compared with os.SameFile
	header string      // its header line, compared too
	offset int64       // bytes read: complete lines only
	lines  int         // index lines read, "+" and "-" alike
	order  []*viewEntry
	byName map[string]*viewEntry // live entries
	dead   int                   // pruned entries still in order
	slab   []viewEntry           // room for the entries of a whole index read
}

// viewEntry is one entry of the view; dead once a "-" line names it.
type viewEntry struct {
	vectorEntry
	dead bool
	// gone is set, under Vector.mu, once a Search found the entry's file
	// removed by hand: Search no longer returns it, though the index still
	// lists it (and so BM25's statistics count it) until pruned or rebuilt.
	gone bool
}

// viewChange is what a refresh found: with reset, the view was read from
// scratch and every live entry counts as added.
type viewChange struct {
	reset   bool
	added   []*viewEntry
	removed []*viewEntry
}

// refresh brings the view up to date with the index in dir. The caller
// holds the directory lock, shared or exclusive. A missing index or one
// without its header is memory.ErrNotFound.
func (w *indexView) refresh(dir string) (viewChange, error) {
	var ch viewChange
	f, err := os.Open(filepath.Join(dir, vectorIndexFile))
	if err != nil {
		return ch, fsError(err, "opening the vector index")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ch, fsError(err, "reading the vector index")
	}
	header, ok := readHeader(f)
	if !ok {
		return ch, memory.Errorf(memory.ErrNotFound, "the vector index has no header")
	}
	if w.file == nil || !os.SameFile(w.file, fi) || header != w.header || fi.Size() < w.offset {
		*w = indexView{byName: map[string]*viewEntry{}, offset: int64(headerLen), header: header}
		ch.reset = true
	}
	w.file = fi
	if fi.Size() > w.offset {
		// One string for all the new lines, read without an intermediate
		// copy: the entries' strings share it.
		var b strings.Builder
		size := fi.Size() - w.offset
		b.Grow(int(size))
		if n, err := io.Copy(&b, io.NewSectionReader(f, w.offset, size)); n != size {
			return ch, fsError(shortRead(err), "reading the vector index")
		}
		text := b.String()
		text = text[:strings.LastIndexByte(text, '\n')+1] // an unterminated last line waits for its end
		w.offset += int64(len(text))
		if ch.reset {
			n := strings.Count(text, "\n")
			w.byName = make(map[string]*viewEntry, n)
			w.order = make([]*viewEntry, 0, n)
			w.slab = make([]viewEntry, 0, n)
		}
		for len(text) > 0 {
			i := strings.IndexByte(text, '\n')
			w.apply(text[:i], &ch)
			text = text[i+1:]
		}
	}
	if w.dead > 1024 && w.dead > len(w.order)/2 {
		live := make([]*viewEntry, 0, len(w.byName))
		for _, e := range w.order {
			if !e.dead {
				live = append(live, e)
			}
		}
		w.order, w.dead = live, 0
	}
	if ch.reset {
		ch.added = w.live()
	}
	return ch, nil
}

// apply records one index line.
func (w *indexView) apply(line string, ch *viewChange) {
	w.lines++
	add, e, ok := parseLineString(line)
	switch {
	case !ok:
	case add:
		if w.byName[e.name] != nil {
			return
		}
		ve := w.newEntry(e)
		w.order = append(w.order, ve)
		w.byName[e.name] = ve
		if !ch.reset {
			ch.added = append(ch.added, ve)
		}
	default:
		ve := w.byName[e.name]
		if ve == nil {
			return
		}
		ve.dead = true
		delete(w.byName, e.name)
		w.dead++
		if !ch.reset {
			ch.removed = append(ch.removed, ve)
		}
	}
}

// newEntry returns a new viewEntry holding e, from the slab while it has
// room: one allocation for all the entries of a whole index read.
func (w *indexView) newEntry(e vectorEntry) *viewEntry {
	if len(w.slab) == cap(w.slab) {
		return &viewEntry{vectorEntry: e}
	}
	w.slab = append(w.slab, viewEntry{vectorEntry: e})
	return &w.slab[len(w.slab)-1]
}

// live returns the live entries, oldest first.
func (w *indexView) live() []*viewEntry {
	out := make([]*viewEntry, 0, len(w.byName))
	for _, e := range w.order {
		if !e.dead {
			out = append(out, e)
		}
	}
	return out
}
