// Package fs is a filesystem storage driver: every record lives in one
// directory, which several Drivers — in one process or in many — may open
// and write at once. It implements driver.Driver, driver.Sweeper and
// driver.Swapper (compare-and-swap on record versions). It does not
// implement driver.VectorSearcher or driver.Claimer: vectors are stored
// and returned bit for bit, one dimension per store, but not searched, and
// there is no work queue.
//
// # Layout
//
// The directory holds two files. records.log is an append-only log: a
// 28-byte header (magic "agmemlog", format version, generation, the
// store's vector dimension, CRC-32C) followed by frames. A frame is one
// committed write: an 8-byte little-endian payload length, a CRC-32C over
// the length and the payload — either a batch of records,
// each with its version (one Put or Swap), or a batch of tombstones (the
// tenant and id of each record one Delete or Sweep removed: ids are unique
// per tenant). lock is an empty file that writers lock with flock(2)
// (LockFileEx on Windows; platforms with neither fail with
// memory.ErrUnimplemented).
// A log of format 1, written before ids were unique per tenant (its
// tombstones name ids alone), is read as it was written and rewritten in
// the current format by the first Open or write; drivers that read only
// format 1 then refuse the directory with memory.ErrUnimplemented.
//
// # Durability
//
// A write takes the exclusive lock, appends its frame with one write(2)
// and fsyncs the log before it returns, so an acknowledged write survives
// a crash of the program or of the machine. A Put is one frame, so a
// batch is stored whole or not at all. A crash mid-append leaves the start
// of a frame at the end of the log; its length or checksum gives it away,
// and the next Open or write, holding the lock, cuts it off. A complete
// frame whose checksum fails with more data after it is not a torn write
// but damage: Open and writes fail with memory.ErrInvalidArgument rather
// than cut off what follows (a Driver already open keeps serving reads of
// the records before it). A
// damaged length field is indistinguishable from a torn write and is cut
// off with everything after it.
//
// # Sharing
//
// Every Driver keeps an index of the whole log in memory: every record,
// its content included, by id and by identity field, so reads never touch
// the disk and memory use grows with the store. Before each call it brings
// the index up to date: a stat(2) of the log tells whether anything
// changed, and only the frames appended since its last call are read.
// Reads take no file lock; they stop at an incomplete frame, which is a
// write in progress elsewhere, and may see another process's complete
// frame a moment before that process's fsync returns. Writes hold the lock only while they catch
// up, check their batch against the current records (identity conflicts,
// versions, the vector dimension), append and fsync, so every write sees
// every write before it, in any process. The locks belong to an open
// file, so two Drivers of one process exclude each other exactly as two
// processes do. The lock is advisory and local: the directory must not be
// shared over a network filesystem whose locks are not coherent.
//
// # Compaction
//
// Replaced and deleted records stay in the log until it is compacted:
// once the log has reached Options.CompactBytes and the live records take
// less than half of it, the writer that notices rewrites the live records
// into a new file of the next generation (written under a temporary name,
// fsynced, renamed over records.log, the directory fsynced), still holding
// the lock. Other Drivers see that records.log is no longer the file they
// have open and reload it from scratch. A temporary file left by a crash
// is removed at the next Open.
//
// # Errors
//
// Operating-system errors are classified with the memory.Err* sentinels
// and stay reachable with errors.As: missing files are memory.ErrNotFound,
// permission and read-only errors memory.ErrPermissionDenied, a full disk
// memory.ErrTooLarge, a log that is not one or is damaged (or a file
// where the directory should be)
// memory.ErrInvalidArgument, a log of a newer format
// memory.ErrUnimplemented, and other I/O failures memory.ErrClosed.
// Context errors are returned unchanged; a call waiting for another
// process's lock honours its context.
package fs
