// Package vecindex is an exact k-nearest-neighbour index over float32
// vectors, scored by cosine similarity, that the drivers without a vector
// index of their own (in-memory, SQLite) share.
//
// Vectors live in Sets, one per group the caller keeps apart (the drivers
// use one per writer identity). A Set stores its vectors normalised to
// unit length, one after another in a single slab, so that a score is a
// plain dot product computed by the vecmath kernels, and keeps beside
// them a copy quantised to 8 bits a value.
//
// Search is exact: its results are those of scoring every row. It streams
// through the quantised copies, a quarter of the bytes, bounding each
// row's score from above and below with integer kernels, and scores with
// the float32 vectors only the few rows those bounds cannot rule out,
// keeping the k best in a bounded heap; it splits large searches across
// runtime.GOMAXPROCS goroutines. quant.go and scan.go explain why the
// bounds never change a result.
//
// Rows are tagged with a caller-chosen Ref; the caller maps Refs to its
// records and decides, through the accept and tie functions of Search,
// which rows qualify and how rows of exactly equal score are ordered.
package vecindex
