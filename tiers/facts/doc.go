// Package facts is the long-term fact tier: what an agent learned, kept as
// one record per fact (memory.KindFact) in a backend.Store, with the
// everyday calls of a fact memory — Add, Search, Get, List, Update,
// Delete and History — each scoped as every read and write of the Store
// is.
//
// What it promises:
//
//   - Attribution and deduplication. A fact is written with the writer's
//     whole identity (compound attribution) under the id
//     memory.ContentID(memory.KindFact, writer, text), as memory.NewFact
//     makes it, so one text is stored once per writer identity: adding it
//     again changes nothing and says so (Existing).
//   - Provenance. A fact keeps the ids of the turns it came from
//     (SourcesKey; see Sources).
//   - History is never destroyed. A newer fact supersedes an older one
//     (Update, or Add with extract.Fact.Supersedes): the older record is
//     kept under its id as memory.KindSuperseded, with the end of its
//     validity and its successor (SupersededAtKey, SupersededByKey), and
//     the newer one names it (SupersedesKey); validity starts at a
//     record's creation (see Validity). Superseded facts are never
//     searched — the kind is filtered inside the driver's search — but
//     Get, List and History return them. Re-adding a superseded fact's
//     text changes nothing and says so (Superseded): an old text never
//     silently reverts a newer fact.
//   - Races. Facts are created create-only and superseded by
//     compare-and-swap on the old fact's version (driver.Swapper), so of
//     concurrent updates of one fact exactly one succeeds and the others
//     store nothing.
//   - Scope. Reads (Get, Search, List, History) name a memory.Level and
//     see what the Store's filter for it admits. Update supersedes a fact
//     of the caller's reach: its agent's facts of its user, whichever
//     session learned them (memory.LevelAgent; its user's without an
//     agent), so a later session corrects an earlier one, and the old
//     record keeps its own attribution. Delete acts on facts the caller
//     wrote, whose record carries exactly the caller's identity. Outside
//     that, a fact is memory.ErrNotFound to them.
//
// Search ranks with package recall (Options.Recall): lexically by default,
// hybrid with an embedder. The store's driver must have text search and
// compare-and-swap (the in-memory, SQLite, PostgreSQL and fs drivers do).
package facts
