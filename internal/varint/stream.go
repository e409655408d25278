package varint

import (
	"errors"
	"sync"
)

// A Stream is a buffer of known length that one goroutine fills in order
// (Write) while readers decode what has arrived (Stream.Reader), so that
// decoding a value read off a database or a network overlaps reading it.
// A Reader of a stream waits for bytes it needs that have not arrived,
// until they do or the stream ends (End); a read beyond what arrived by
// the end fails as cut short.
type Stream struct {
	all   []byte // the whole buffer: cap(all) is the stream's length
	wrote int    // bytes written, by the writer only

	mu    sync.Mutex
	more  sync.Cond
	avail int  // bytes readers may read
	ended bool // no more will be written
}

// ErrStreamFull is Write's error for bytes beyond the stream's length.
var ErrStreamFull = errors.New("varint: write beyond the stream's length")

// NewStream returns an empty stream of length len(buf) that fills buf,
// which the stream owns from then on.
func NewStream(buf []byte) *Stream {
	s := &Stream{all: buf[:0:len(buf)]}
	s.more.L = &s.mu
	return s
}

// Len returns the stream's length.
func (s *Stream) Len() int { return cap(s.all) }

// Write appends p to the stream and lets readers read it. It refuses,
// with ErrStreamFull and writing nothing, bytes beyond the stream's
// length. Only one goroutine writes, and not after End.
func (s *Stream) Write(p []byte) (int, error) {
	err := s.Fill(len(p), func(dst []byte) error {
		copy(dst, p)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Fill has fill write the stream's next n bytes in place, in the buffer,
// and then lets readers read them: for a writer that reads its source
// straight into the stream. It refuses, with ErrStreamFull and without
// calling fill, bytes beyond the stream's length; when fill fails,
// readers see none of the n bytes and the error is returned. Only one
// goroutine writes, and not after End.
func (s *Stream) Fill(n int, fill func(dst []byte) error) error {
	if n < 0 || n > cap(s.all)-s.wrote {
		return ErrStreamFull
	}
	if err := fill(s.all[s.wrote : s.wrote+n : s.wrote+n]); err != nil {
		return err
	}
	s.wrote += n
	s.mu.Lock()
	s.avail = s.wrote
	s.mu.Unlock()
	s.more.Broadcast()
	return nil
}

// End ends the stream: readers waiting for bytes that have not arrived
// fail. The writer calls it once it writes no more, whatever the reason.
func (s *Stream) End() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.more.Broadcast()
}

// Written returns the bytes written so far, for the writer to check
// once it has written the last of them.
func (s *Stream) Written() []byte { return s.all[:s.wrote] }

// wait returns how many bytes have arrived once at least want have, or
// the stream has ended.
func (s *Stream) wait(want int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.avail < want && !s.ended {
		s.more.Wait()
	}
	return s.avail
}

// Reader returns a Reader of the whole stream, from its start, making
// errors with fail.
func (s *Stream) Reader(fail func(format string, args ...any) error) Reader {
	n := s.wait(0)
	return Reader{B: s.all[:n:cap(s.all)], Fail: fail, src: s, end: cap(s.all)}
}
