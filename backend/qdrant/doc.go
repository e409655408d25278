// Package qdrant is a storage driver over one Qdrant collection, through
// the official Go client (github.com/qdrant/go-client, gRPC): a
// driver.Driver, driver.Sweeper and driver.Swapper with vector search
// (driver.VectorRanker), text search (driver.TextRanker) and a hybrid
// search fused by Qdrant (SearchHybrid), and a work queue
// (driver.Claimer, driver.WorkEraser) in a second collection (Work
// queue, below). It needs Qdrant 1.17 or newer (conditional upserts with
// update_mode).
//
// New takes a client the caller owns and never closes it; Open makes one
// for an address and closes it in Close. Either creates the collection
// when it does not exist — dense vectors "dense" and "raw" of
// Options.Dims values when Dims is set, and a sparse vector "text" — and
// the payload
// indexes the driver's filters use: keyword indexes on the six identity
// fields (the tenant's flagged is_tenant, so Qdrant keeps each tenant's
// points together), on record_id, kind, key, del and terms; integer
// indexes (lookup and range) on created, expires, expires_s, expires_ns
// and del_at; bool indexes on dead and text. Qdrant fixes a collection's
// vector size when it creates it, so the store's dimension is
// Options.Dims (or an existing collection's), not its first vector's.
//
// # Points and payload
//
// A record is one point whose id is PointID(collection, tenant, record
// id): a UUID from a SHA-256 of the three, length-prefixed, so re-adding
// a record writes its point again, and two tenants' records under one id
// are two points. Its payload holds the whole record in one string, and
// beside it the fields the driver's filters and searches read:
//
//	record                                          the record less its vector: its fields length-prefixed in one
//	                                                string (record.go), which a read decodes as one payload value
//	tenant, user, agent, instance, squad, session  "=" + the identity field (so "" is "=")
//	record_id, kind, key                            strings, as written
//	created, version                                unix nanoseconds; the version (integers)
//	expires_s, expires_ns                           the expiry as whole seconds (rounded down) and the nanoseconds
//	                                                past them; 2^40 seconds when it never expires
//	dead                                            false; true once a Delete or Sweep has marked the point
//	del, del_at                                     the marking call's token and wall-clock second (marked points only)
//	text, asks                                      whether content is not "", and driver.Asks(content)
//	speaker                                         metadata[memory.SpeakerKey]; absent when empty
//	terms                                           content's distinct terms (the lexical engine's Analyze); absent without any
//	writes                                          the point's recent writes (below)
//
// and its named vectors, when it has them: "dense", the record's vector
// divided by its length (in float64, so vectors of extreme values do not
// overflow), which searches use; "raw", the vector as written (Distance
// Dot, which Qdrant stores as given; no HNSW graph, on disk), which reads
// return; and "text", the content's terms weighed for BM25 (below).
//
// Content, label, key and metadata come back byte for byte (a document's
// JSON is never parsed); times to the nanosecond, in UTC; vectors bit for
// bit. Expiry is compared on expires_s and expires_ns because Qdrant's
// range bounds are float64, which cannot hold nanoseconds since 1970
// exactly; whole seconds and nanoseconds each fit. Reading a record is
// one payload value and one packed vector, not fifteen values and a
// base64 string: decoding protobuf maps of values is most of the
// client's time in a search.
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
// Every write is conditional. Put and Swap read the points they write
// first, and each upsert carries an update_filter under which Qdrant
// replaces a point only while it is as it was read: at the version read,
// stored by the identity writing it, unmarked; or marked by the same
// Delete. A point that was absent is inserted only while it is still
// absent. Qdrant skips a point whose condition fails silently and says
// nothing of what it wrote, so every point also carries its recent writes
// (payload key "writes": version, the writing call's token and second,
// the last two minutes' and at most 64), and the writer reads its points
// back:
//
//   - its own entry there: written, even if later writes have replaced
//     it since;
//   - another identity now holds the id: Put and Swap fail with
//     driver.HeldByAnother (a Put's records written before stay stored);
//   - otherwise another write took the version first: Put writes that
//     record again from what the point holds now, up to 16 times, and
//     then fails with memory.ErrUnavailable; Swap fails with
//     memory.ErrConflict, having stored nothing.
//
// So versions never repeat while a record is stored, a plain Put between
// a read and a Swap makes the Swap fail, and of Swaps racing from one
// version exactly one wins (driver.Swapper). When more writes replaced a
// Swap's write before it read the point back than its recent writes keep,
// whether it won is unknown, and Swap fails with memory.ErrUnavailable
// rather than guess (a Put counts such a record written: a later write
// meant to replace it did). A write whose point a Delete removed after it
// wrote reads back nothing of it and reports it lost or rewrites it; a
// Put whose point is recreated after a Delete starts again at version 1.
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
// # Vector search
//
// Search and RankVector send one Query API request: the query vector,
// normalised, against "dense", under the filter List uses, so the k
// results are the k nearest among the records the query matches, never a
// filtered subset of a wider top k. Qdrant scores in float32 and leaves
// equal scores in no defined order; the driver scores each point it reads
// again in float64, from the vector as written (the contract's cosine
// similarity), and ranks by that, ties in List order. It reads k + 1
// points; when the k-th best score is within float32 rounding of the
// last point's (a tie, or nearly), it also reads every point Qdrant
// scores within that rounding of the k-th (1,000 a request) and ranks
// them all, so the result is the exact one for any data, at the cost of
// the boundary's tie group. With Options.ExactSearch Qdrant scores every
// point the filter matches, and the search is exact; without it Qdrant's
// planner walks its HNSW graph for large filtered sets, and the search is
// as approximate as the graph.
//
// # Text search
//
// SearchText and RankText rank by BM25 with the lexical engine's terms
// (its Analyze: words, less stopwords, stemmed), k1 and b, through the
// sparse vector "text". A record's vector holds, for each of its terms,
//
//	tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))
//
// at the term's dimension (a 32-bit FNV-1a of the term), with avgdl the
// fixed Options.TextLength (DefaultTextLength), since a point's weights
// are fixed when it is written. A search first counts, exactly, the
// records with content of the identities the query's filter matches
// (expired or not, as the contract's corpus) and, for each of the
// query's terms, those that hold it: one Count request each, eight at a
// time. Each term's query weight is its IDF over those counts, so the
// statistics are the scope's alone, as the contract requires: another
// tenant's text never moves a score. One Query request then ranks the
// records the query matches that hold one of its terms (a filter on the
// terms payload, so a record sharing only a hashed dimension is never
// returned), with ties in List order as for vectors. Against the
// contract's BM25 (driver.TextSearcher, the lexical engine's reference
// ranking) two things differ, which the conformance suite's
// ApproximateTextSearch declaration states: lengths are normalised by
// the fixed average rather than the scope's, and scores are float32
// sums; WriterScore is always 0, since scoring every writer's records
// as one text would need them all. The cost is one request per distinct
// query term, plus two.
//
// WriterRefs is one Scroll, paged, of the named writers' records under
// the query's filter: exact, as List.
//
// # Hybrid search
//
// SearchHybrid fuses a text and a vector search in Qdrant: one Query
// request whose two prefetches (the sparse query, weighed as SearchText
// weighs it, and the dense one) read 4k points each under the query's
// filter, fused by Reciprocal Rank Fusion, ties in List order. The
// library's own hybrid recall (package recall) fuses SearchText and
// Search itself, with its other signals; SearchHybrid is for callers
// who want Qdrant's fusion in one Query request (after the text search's
// counts).
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
// # Work queue
//
// The work queue lives in a second collection, Options.Collection
// followed by "_work" (so a store's name is at most 250 bytes), which the
// first Enqueue creates, tolerating another driver's creating it at the
// same time, with keyword indexes on queue, state, del and the identity
// fields (the tenant's flagged is_tenant), integer indexes (lookup and
// range) on created, until_s, until_ns, del_at and done_at, and a bool
// index on dead. Until then Claim and EraseWork find nothing, and Renew,
// Release and Complete fail with memory.ErrConflict. An item is one
// point whose id is a UUID hashed from the store's collection, the queue
// and the item id; its payload holds the queue, the item id, the identity
// fields ("=" + the value, as records'), the payload, created (unix
// nanoseconds), the state (pending, claimed or done), the claim's token,
// the lease's expiry by the driver's clock (until_s and until_ns, split
// as expiry is), the attempt count, the item's incarnation (the token of
// the Enqueue that made it), a version and the point's recent writes (as
// records'). Nothing is filtered in Go: claims and erasures are Qdrant
// filters, and every write is conditional.
//
// Every change of an item is an upsert whose update_filter holds only
// while the point is as it was read (the same incarnation, version and
// state, unmarked), which Qdrant applies to each point atomically, and
// only to a point that still exists (update_mode update_only; an Enqueue
// also inserts where no point is). The writer then reads the point back
// and finds its write among the point's recent writes, or knows another
// write came first:
//
//   - Enqueue reads the batch's points, writes the items whose point
//     holds none (absent, done, or marked by an EraseWork) in requests of
//     at most 256 points and about 3 MiB, and reads them back: three
//     requests for up to 256 items. An item another Enqueue wrote first
//     is present, not new. As for Put, it is all or nothing only for the
//     refusals it makes before it writes (invalid items): one that fails
//     partway (a server failure, the context's end) may leave part of its
//     batch enqueued, the requests written before the failure and part of
//     the one it failed in, and retrying it is safe (those items are
//     present then, not new).
//   - Claim reads the oldest claimable items (pending, or claimed under a
//     lease that has lapsed, and unmarked) with a Scroll ordered by
//     created, the n oldest and up to 8(n+1) in all, and takes the n
//     oldest by created and then id (when the n-th and the next share a
//     creation time, every claimable item of that time is read, as List
//     does). It reads their points whole, claims those still claimable in
//     one conditional upsert (a new token each, the attempt count plus
//     one, and a lease until the driver's clock plus the lease) and reads
//     them back: four requests (five for a tie group, or when the bounded
//     read below finds too few). An item another claimer took first is
//     not returned; when it lost every item, it takes n others at random
//     among those it read (or, with none left, among a wider read), up to
//     8 times in all. A Claim that runs while other Claims of the queue
//     run in the same driver chooses n at random among the items the
//     last of their reads found (if it is at most 250 ms old, or in
//     flight, when it waits for it; three requests then) and the others
//     have not chosen, or among those it reads itself: concurrent
//     claimers neither all go for the same items nor each read the
//     queue, and for them "oldest first" means among the oldest. When
//     that read found nothing claimable, they find nothing, in no
//     request; an Enqueue or a Release by the driver drops its read, so
//     the items it makes claimable are read at once.
//     The ordered read is bounded by a creation time learnt from the
//     reads before it (one at or below which they found 256 claimable
//     items or more), and followed by an unbounded one when it finds too
//     few: on Qdrant, which walks the index on created, the bound changes
//     little; on a server that filters every point and sorts those that
//     pass, such as the in-process one, it saves most of the work.
//   - Renew and Release read the point whole and fail with
//     memory.ErrConflict (driver.StaleLease) unless it is claimed under
//     the lease's token, lapsed or not; they write it guarded and read it
//     back: three requests. Release makes the item pending at once.
//   - Complete writes the point done, guarded by the claim itself (claimed
//     under the lease's token, unmarked), so without reading it first,
//     and reads it back: two requests. A done point holds no item,
//     identity or payload, only the incarnation (which the lease's token
//     carries), a version of 0 and the Complete's write; it is never
//     claimed or erased, and an Enqueue of its id replaces it. A driver
//     deletes its done points 256 at a time, with one delete by a filter
//     that holds for each only while it is done in the incarnation
//     completed; Sweep deletes those a driver left (it closed first, or
//     the delete failed) ten minutes after, by the wall clock.
//   - EraseWork marks the queue's items whose identity the filter matches,
//     pending or claimed, as Delete marks records, counts them exactly
//     and deletes them (the three requests of Delete, with no page cap).
//     A write of an erased item finds it marked or gone: its claim is
//     stale. An Enqueue that replaces a marked item between the mark and
//     the count is not counted among the erased. An EraseWork that fails
//     after marking leaves its items marked, invisible, and replaceable
//     by an Enqueue; Sweep deletes them ten minutes after the mark.
//
// So of the claims racing for an item exactly one wins, a claim can be
// taken over only once its lease has lapsed by the claimer's clock (the
// clocks of replicas must agree to well within a lease), and only the
// current claim completes an item, once. What Qdrant does not say, a
// write's read back settles, with the limits of the recent writes: a
// claim whose write is followed, before it reads it back, by more writes
// than they keep is not returned (it lapses unused); a Renew or Release
// in that case fails with memory.ErrUnavailable. An Enqueue counts as new
// an item whose point is gone when it reads it back (completed and
// deleted, or erased, since), and as not new one that was completed and
// enqueued again by another before it read it back.
//
// A driver remembers between calls only what saves requests: per queue,
// the bound of its ordered reads and the items its last read found; the
// items its Claims in flight have chosen; and its done points not yet
// deleted. None of it decides the result of a call that runs alone in
// the driver.
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
// in-process server internal/qdrantserver, declaring driver.Sweeper,
// exact vector search of a fixed dimension (Options.ExactSearch),
// approximate text search, compare-and-swap, the work queue
// (driver.Claimer and driver.WorkEraser), and replicas (a second driver
// with its own client on the same collection); every check of the
// driver contract and of the work queue runs. TestRealQdrant runs the
// same suite against a real Qdrant when QDRANT_ADDR names one. The
// in-process server applies an upsert request whole and orders ties by
// point id, so the partial application described above is documented
// from Qdrant's source, not tested here. It answers a filtered request
// by reading and sorting every point of the collection, under one lock
// for every collection, so ClaimRace (10,240 items, two replicas of
// eight workers) is bound by the server: under the race detector on two
// cores it takes 40 to 50 seconds of the 90 the check allows, and a
// machine busy with other work can push it past them.
package qdrant
