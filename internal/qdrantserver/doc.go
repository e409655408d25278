// Package qdrantserver is an in-process Qdrant for tests: the gRPC services
// Qdrant, Collections and Points of the official client
// (github.com/qdrant/go-client v1.17.1) served from memory, so code written
// against a real Qdrant can be tested where no Qdrant server can run.
//
// It aims to be faithful to Qdrant's semantics rather than fast, and is
// deterministic: every search is exact (no HNSW), results with equal scores
// are ordered by point id, and scroll orders points by id, integers before
// UUIDs, as Qdrant does.
//
// What it serves:
//
//   - Qdrant.HealthCheck, reporting version 1.17.1 so the client's
//     compatibility check passes.
//   - Collections: Create (one unnamed dense vector or named dense vectors
//     with Cosine, Dot, Euclid or Manhattan distance, and named sparse
//     vectors), Get, List, Delete, CollectionExists.
//   - Points: Upsert (with update_filter and update_mode insert_only,
//     update_only or upsert, skipping excluded points silently as Qdrant
//     does), Get, Delete (by ids or by filter), Count (always exact, whatever
//     the exact flag), Scroll (by id with next_page_offset, or by order_by
//     over a key with an integer, float or datetime index: a point once per
//     value, ties by id, no next_page_offset), SetPayload, OverwritePayload,
//     DeletePayload, ClearPayload (each by ids or by filter),
//     CreateFieldIndex, DeleteFieldIndex, Search, and Query (nearest dense or
//     sparse queries, nested prefetches, RRF and DBSF fusion).
//   - Filters: must, should, must_not, min_should, nested filters, match
//     (keyword, integer, boolean, text, phrase, text_any, any, except),
//     range, datetime_range, values_count, is_empty, is_null, has_id,
//     has_vector and nested object conditions, over payload paths such as
//     "a.b", "a[].b" and "a[0]".
//
// Everything else answers codes.Unimplemented (among them UpdateVectors,
// UpdateBatch, the Query API's order_by and shard keys). Payload indexes
// are recorded and reported and decide whether order_by is allowed, but do
// not change filter results: a text match is a substring match, as Qdrant's
// is on a field without a full-text index.
package qdrantserver
