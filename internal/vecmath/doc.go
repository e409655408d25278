// Package vecmath holds the vector kernels behind the exact similarity
// search: float32 dot products (Dot, and DotBatch for one query against
// many rows), norms and normalisation, and the exact integer dot product
// of quantised vectors (DotU8I8Batch) with which the search rules rows out
// cheaply.
//
// On amd64 CPUs that support AVX2 and FMA (and whose operating system
// saves the AVX register state), the kernels run hand-written assembly;
// elsewhere, or when built with the purego tag, they run unrolled pure-Go
// loops. The choice is made once, at package initialisation, from the
// CPUID instruction; Kernel reports it.
//
// The functions require slices of matching lengths, as each documents.
// This package is internal and its callers check their inputs, so a
// mismatch is a programming error and panics.
package vecmath
