package memory

import "time"

// Clock returns the current time. Stores, drivers and memory types take
// one so that expiry and ordering are testable; nil means time.Now.
type Clock func() time.Time

// Now returns c() or time.Now() when c is nil.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	return c()
}

// Nanos returns the clock's reading as unix nanoseconds, the form drivers
// compare expiry times in, or ErrInvalidArgument when the reading
// lies outside the years 1678 to 2262.
func (c Clock) Nanos() (int64, error) {
	now := c.Now()
	n, ok := UnixNanos(now)
	if !ok {
		return 0, Errorf(ErrInvalidArgument, "the clock reads %s, outside the years 1678 to 2262", now)
	}
	return n, nil
}
