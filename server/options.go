package server

import (
	"log/slog"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the largest request body: room for a turn
	// of memory.MaxContentBytes however its JSON escapes it.
	DefaultMaxBodyBytes = 8 << 20
	// DefaultReadTimeout bounds reading a request, body included.
	DefaultReadTimeout = 30 * time.Second
	// DefaultHandlerTimeout bounds the work a request asks for.
	DefaultHandlerTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds the whole request, from its headers to
	// the end of the response.
	DefaultWriteTimeout = 45 * time.Second
	// DefaultIdempotencyTTL is how long a succeeded write's response is
	// kept for its Idempotency-Key.
	DefaultIdempotencyTTL = 10 * time.Minute
	// DefaultIdempotencyKeys is how many responses are kept at most.
	DefaultIdempotencyKeys = 10000
)

// Options configure a Server. Every field but Authenticator may be left
// zero for its default.
type Options struct {
	// Authenticator derives each request's identity; it is required.
	Authenticator Authenticator
	// MaxBodyBytes is the largest request body; zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ReadTimeout, HandlerTimeout and WriteTimeout bound a request's
	// reading, its work and the whole exchange; zero means
	// DefaultReadTimeout, DefaultHandlerTimeout and DefaultWriteTimeout.
	// The read and write deadlines are set on the connection through
	// http.ResponseController where the http.ResponseWriter supports it.
	ReadTimeout, HandlerTimeout, WriteTimeout time.Duration
	// IdempotencyTTL is how long a succeeded write's or erasure's response
	// is kept for its Idempotency-Key; zero means DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// IdempotencyKeys is how many responses are kept at most, the oldest
	// dropped first; zero means DefaultIdempotencyKeys.
	IdempotencyKeys int
	// Logger receives internal errors (answered 500 without their
	// details); nil discards them.
	Logger *slog.Logger
	// Clock is the time the idempotency keys expire by; nil means
	// time.Now. (BearerOptions.Clock is the tokens'.)
	Clock memory.Clock
	// Wrap, when not nil, wraps the Memory the handlers call: the calls
	// of every request go through what it returns (telemetry.Wrap records
	// them as metrics and spans). Shutdown still closes the Memory itself.
	Wrap func(tiered.Interface) tiered.Interface
}

func (o Options) withDefaults() (Options, error) {
	if o.Authenticator == nil {
		return o, memory.Errorf(memory.ErrInvalidArgument, "server: Options.Authenticator is required")
	}
	if o.MaxBodyBytes < 0 || o.ReadTimeout < 0 || o.HandlerTimeout < 0 || o.WriteTimeout < 0 || o.IdempotencyTTL < 0 || o.IdempotencyKeys < 0 {
		return o, memory.Errorf(memory.ErrInvalidArgument, "server: negative option")
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.HandlerTimeout, DefaultHandlerTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdempotencyTTL, DefaultIdempotencyTTL)
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.IdempotencyKeys == 0 {
		o.IdempotencyKeys = DefaultIdempotencyKeys
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
