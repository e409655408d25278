// Package recindex is the identity index of the storage drivers that hold
// their records in the process (in-memory, fs): every live record by tenant
// and id, and in one posting list per identity field value, kept in List
// order, so that a read touches only the records of the most selective
// field its filter names, and newest first is a walk from the end.
//
// An Entry is one record in compact form: its times are unix nanoseconds,
// and its identity is that of its Writer, one per distinct identity, so the
// identity strings are stored once, a writer's posting lists are found
// once, and a read checks its filter once per writer rather than per
// record. Each driver keeps data of its own beside the record: an Entry
// carries an Extra of type E and a Writer an Extra of type W (the
// in-memory driver keeps a vector's row there and each writer's vectors;
// the fs driver the size of each record's encoding in its log).
//
// An Index decides what the driver contract asks of every driver alike:
// the version a Put or a Swap stores and whether the caller may write the
// id at all, which entries a query can match, and the records List
// returns. Storage, durability and vectors stay with the driver.
//
// An Index is not safe for concurrent use. Its read methods (Get, Len,
// All, List, Matching, Expired, Writers) may run together; Put, Remove and
// Versions need the caller's lock held exclusively.
package recindex
