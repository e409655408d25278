// Package textcache is the SQL drivers' in-process copy of the stored
// records' analysed texts, searched as driver.TextSearcher describes: one
// lexical.Index per writer identity, so that a search reads only the
// indexes of the writers its filter matches and its corpus statistics are
// theirs alone, with what the rest of a query tests (kinds, key, ids,
// expiry) and List order for ties kept beside each text.
//
// A Cache knows nothing of where the records live. The driver loads it,
// keeps it current with the changes it learns of (its own writes, and
// whatever its engine tells it others wrote) and locks it: a Cache is not
// safe for concurrent use, except that any number of Searches may run
// together while nothing changes it.
package textcache
