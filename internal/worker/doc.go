// Package worker is the one home of background work over a driver's work
// queue (driver.Claimer): a Pool of goroutines that claim leased batches
// of one queue, hand them to a Handler, and settle every item by what the
// handler said of it.
//
// For each lease of a batch, after the handler returns:
//
//   - nil: the item is done and the pool completes it. A Complete that
//     finds the lease lapsed and the item claimed again is logged at
//     debug level: the item was worked twice, as a lapsed lease allows.
//   - Settled: the handler settled the item itself (completed it before
//     publishing a result, say); the pool leaves it alone.
//   - Later(d): not done and not failed; the item is claimable again after
//     d. Such items are never given up.
//   - Halt(err): not done; the item is given back, claimable at once, and
//     the whole pool stops claiming (Err returns err).
//   - any other error: a failure. The item is claimable again after
//     Options.Backoff of its attempt, or, on its Options.MaxAttempts-th
//     claim, given up: Options.GiveUp is called and the item completed.
//
// No goroutine sleeps through a delay: an item waits by holding a lease
// that lapses when the delay ends (Renew), or is released when the delay
// is shorter than driver.MinLease. Several pools, in one process or many,
// may share a queue; the driver's leases keep their claims apart.
//
// Close stops claiming, cuts the waits between empty claims short, and
// waits for the batches in flight, which run to the end: their context is
// not cancelled by Close.
package worker
