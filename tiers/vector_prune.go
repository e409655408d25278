package tiers

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
)

// pruneLocked deletes the entries filter selects beyond the newest
// maxEntries and those older than the TTL. The caller holds v.mu and the
// exclusive lock, so the view it refreshes is the whole truth.
func (v *Vector) pruneLocked(ctx context.Context, filter memory.Filter) error {
	if err := v.refreshLocked(); err != nil {
		return err
	}
	now := v.store.Now()
	var doomed []*viewEntry
	kept := 0
	for i := len(v.view.order) - 1; i >= 0; i-- {
		e := v.view.order[i]
		if e.dead || !filter.Matches(e.who) {
			continue
		}
		if kept == v.maxEntries || v.stale(e.created, now) {
			doomed = append(doomed, e)
			continue
		}
		kept++
	}
	return v.deleteLocked(ctx, doomed)
}

// refreshLocked brings the view up to date and applies the change to the
// search index when it has been built. The caller holds v.mu and the
// directory lock.
func (v *Vector) refreshLocked() error {
	ch, err := v.view.refresh(v.dir)
	if err == nil {
		v.search.update(ch)
	}
	return err
}

// deleteLocked removes the files of doomed and records their removal in
// the index, then compacts the index when removed entries make up most of
// it. The caller holds v.mu and the exclusive lock.
func (v *Vector) deleteLocked(ctx context.Context, doomed []*viewEntry) error {
	if len(doomed) == 0 {
		return nil
	}
	var lines strings.Builder
	for _, e := range doomed {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := os.Remove(filepath.Join(v.dir, e.name))
		if err != nil && !os.IsNotExist(err) {
			return fsError(err, "removing vector entry "+e.name)
		}
		lines.WriteString(delLine(e.name))
	}
	if err := v.appendIndex(lines.String()); err != nil {
		return err
	}
	if err := fsError(osfile.SyncDir(v.dir), "syncing the vector directory"); err != nil {
		return err
	}
	if err := v.refreshLocked(); err != nil {
		return err
	}
	if live := len(v.view.byName); v.view.lines > 1024 && v.view.lines > 2*live {
		return v.compactLocked()
	}
	return nil
}

// compactLocked replaces the index with one listing only the live
// entries. The live set is unchanged, so the view and the search index
// stay valid; the view adopts the new file.
func (v *Vector) compactLocked() error {
	live := v.view.live()
	entries := make([]vectorEntry, len(live))
	for i, e := range live {
		entries[i] = e.vectorEntry
	}
	if err := v.replaceIndex(entries); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(v.dir, vectorIndexFile))
	if err != nil {
		return fsError(err, "opening the vector index")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fsError(err, "reading the vector index")
	}
	header, _ := readHeader(f)
	v.view.file, v.view.header, v.view.offset, v.view.lines = fi, header, fi.Size(), len(live)
	v.view.order, v.view.dead = live, 0
	return nil
}

// Forget erases the entries visible to id at level, as the store derives
// the level's filter, and reports how many it removed. A level whose
// fields id lacks is memory.ErrIncompleteScope.
func (v *Vector) Forget(ctx context.Context, id memory.Identity, level memory.Level) (int64, error) {
	if err := v.check(ctx); err != nil {
		return 0, err
	}
	filter, err := v.store.Filter(id, level)
	if err != nil {
		return 0, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	release, err := v.lock(ctx, osfile.Exclusive)
	if err != nil {
		return 0, err
	}
	defer release()
	if err := v.refreshLocked(); err != nil {
		return 0, err
	}
	var doomed []*viewEntry
	for _, e := range v.view.order {
		if !e.dead && filter.Matches(e.who) {
			doomed = append(doomed, e)
		}
	}
	if err := v.deleteLocked(ctx, doomed); err != nil {
		return 0, err
	}
	return int64(len(doomed)), nil
}
