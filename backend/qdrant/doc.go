// Package qdrant is a storage driver (driver.Driver and driver.Sweeper)
// over one Qdrant collection, through the official Go client
// (github.com/qdrant/go-client, gRPC). It needs Qdrant 1.17 or newer
// (conditional upserts with update_mode).
//
// New takes a client the caller owns and never closes it; Open makes one
// for an address and closes it in Close. Either creates the collection
// when it does not exist — with no vectors: records' vectors are kept in
// the payload for now — and the payload indexes the driver's filters use:
// keyword indexes on the six identity fields (the tenant's flagged
// is_tenant, so Qdrant keeps each tenant's points together), on
// record_id, kind, key and del; integer indexes (lookup and range) on
// created, expires, expires_s, expires_ns and del_at; a bool index on
// dead.
//
// # Points and payload
//
// A record is one point whose id is PointID(collection, tenant, record
// id): a UUID from a SHA-256 of the three, length-prefixed, so re-adding
// a record writes its point again, and two tenants' records under one id
// are two points. The payload holds the whole record:
//
//	tenant, user, agent, instance, squad, session  "=" + the identity field (so "" is "=")
//	record_id, kind, label, key, content            strings, as written
//	metadata                                        the metadata map as a JSON object in a string; absent when empty
//	created                                         unix nanoseconds (integer)
//	expires                                         unix nanoseconds; absent when the record never expires
//	expires_s, expires_ns                           expires as whole seconds (rounded down) and the nanoseconds past
//	                                                them; 2^40 seconds when it never expires
//	tokens, version                                 integers
//	vector                                          the float32 values, little-endian, in base64; absent without a vector
//	dead                                            false; true once a Delete or Sweep has marked the point
//	del, del_at                                     the marking call's token and wall-clock second (marked points only)
//
// Content, label, key and metadata are strings in the payload, so they
// come back byte for byte (a document's JSON is never parsed); times come
// back to the nanosecond, in UTC; vectors bit for bit. Expiry is compared
// on expires_s and expires_ns because Qdrant's range bounds are float64,
// which cannot hold nanoseconds since 1970 exactly; whole seconds and
// nanoseconds each fit. One more point, with no identity and so outside
// every query, records the store's vector dimension, fixed by the first
// vector (written with update_mode insert_only and read back, so that of
// racing first writers one dimension wins) and kept after every record is
// deleted.
//
// # Guarantees: what holds and what does not
//
// Qdrant has no transactions: one upsert request is applied in chunks
// with no rollback, and a failure (a server error, a crash, a timeout)
// partway through leaves what was applied stored; readers other than
// Scroll may see a request half applied. So a Put is all or nothing only
// for the refusals decided before it writes:
//
//   - invalid input (driver.CheckPut, a vector of another dimension than
//     the store's) stores nothing;
//   - an id held by another identity of its tenant stores nothing: Put
//     reads the points of the batch's ids first, and refuses the whole
//     batch with driver.HeldByAnother when one is held;
//   - but a Put that fails after that check (the server fails, the
//     context ends) may leave any part of its batch stored. It writes in
//     requests of at most 256 points and about 3 MiB, in the batch's
//     order, each request its own Qdrant operation. Retrying the Put is
//     safe: it rewrites the same points.
//
// Every upsert carries an update_filter: a point is replaced only when
// the identity stored in it is the one writing it, or a Delete has marked
// it. A writer of another identity that stores the same id between the
// check and the write is therefore never overwritten (Qdrant skips such a
// point silently); Put reads the batch's points back after writing and
// reports driver.HeldByAnother when one is now another identity's, the
// rest of the batch being stored. Versions count every write of an id
// (the later record of one id in one batch wins, each occurrence one
// write), but two Puts of one id that race may write the same version:
// a Put is not a compare-and-swap, and this driver has no
// driver.Swapper yet.
//
// Every write waits for the operation to be applied (wait=true) with
// strong write ordering; every read asks for consistency from all
// replicas. Acknowledged writes are in Qdrant's write-ahead log.
//
// # List
//
// The query's filter, kinds, key and ids become a Qdrant filter sent in
// the request — identity fields as keyword matches, ids as the point ids
// they name — with dead = false and the expiry condition (expires_s after
// now's seconds, or equal and expires_ns after now's nanoseconds); nothing
// is filtered in Go. Qdrant orders a Scroll by one payload key and
// leaves points with equal values in no defined order, so List finishes
// the order itself:
//
//   - with a Limit (up to 10,000): a Scroll ordered by created,
//     descending, reads the ids and creation times of Limit points; when
//     it returns Limit points, every point created at the last one's time
//     is read as well (the whole tie group at the boundary, by id pages);
//     the candidates are sorted by created and then id, descending, cut
//     to Limit, and only those are read whole. The cost is two or three
//     requests and the size of the boundary's tie group, not of the scope;
//   - without a Limit (or a larger one): every matching record is read,
//     128 per page, and sorted in Go: the cost is the scope.
//
// The reads are several requests, not one snapshot: a record written or
// deleted meanwhile may be missing or present, as in any read that races
// a write; every record returned matched the query when it was read.
//
// # Delete and Sweep
//
// Qdrant's delete by filter does not report how many points it removed,
// and counting first races other writers. Delete therefore makes three
// requests: one SetPayload by filter (the query's, plus dead = false)
// marks the matching points with a token of its own (dead = true, del =
// token), which Qdrant applies as one operation, so racing Deletes mark
// disjoint sets; an exact Count of the token's points is the number
// removed; a delete by the token removes them. Every read requires dead =
// false, so marked points are gone for readers from the mark on, and a
// Put that rewrites a marked point recreates the record at version 1.
// Sweep does the same for the records expired at the driver's clock, in
// every tenant. A Delete or Sweep that fails after marking leaves its
// points marked, invisible and uncounted; the next Sweep removes marked
// points ten minutes after their mark (by the wall clock). Update by
// filter is capped under Qdrant's strict mode (max_update_by_filter_limit):
// leave strict mode off, or raise the cap above the largest scope.
//
// # Errors and lifecycle
//
// gRPC errors are classified by status code: InvalidArgument,
// FailedPrecondition and OutOfRange are memory.ErrInvalidArgument;
// NotFound memory.ErrNotFound; AlreadyExists and Aborted
// memory.ErrConflict; PermissionDenied and Unauthenticated
// memory.ErrPermissionDenied; ResourceExhausted memory.ErrTooLarge;
// Unimplemented memory.ErrUnimplemented; anything else, an unreachable or
// failing server among them, memory.ErrClosed, as a lost database
// connection is for the SQL drivers. The gRPC error stays reachable
// (status.FromError, errors.As). Context errors come back unchanged, also
// when the context ends during a request. Close is idempotent, waits for
// the calls in flight, and every later call fails with memory.ErrClosed.
//
// # Conformance
//
// TestConformance runs the conformance suite (backend/backendtest) on the
// in-process server internal/qdrantserver, declaring driver.Sweeper and
// replicas (a second driver with its own client on the same collection);
// every check of the driver contract runs, and the checks of compare-and-
// swap, vector and text search and the work queue skip, as the driver
// does not declare them. TestRealQdrant runs the same suite against a
// real Qdrant when QDRANT_ADDR names one. The in-process server applies
// an upsert request whole and orders ties by point id, so the partial
// application described above is documented from Qdrant's source, not
// tested here.
package qdrant
