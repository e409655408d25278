package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// replays remembers the responses of succeeded requests by idempotency
// key, for a bounded time and number, and makes a request under a key
// still in flight wait for it.
type replays struct {
	ttl   time.Duration
	max   int
	clock memory.Clock

	mu      sync.Mutex
	entries map[string]*replay
	order   []keyed // finished entries, oldest first (all live ttl)
}

// replay is one key's request: in flight until done is closed, then
// kept (finished) when it succeeded.
type replay struct {
	hash     [sha256.Size]byte
	done     chan struct{}
	finished bool
	rep      reply
	expires  time.Time
}

type keyed struct {
	key string
	e   *replay
}

func newReplays(ttl time.Duration, max int, clock memory.Clock) *replays {
	return &replays{ttl: ttl, max: max, clock: clock, entries: map[string]*replay{}}
}

// checkKey validates an Idempotency-Key: printable ASCII, at most
// contract.MaxIdempotencyKeyBytes.
func checkKey(k string) error {
	if len(k) > contract.MaxIdempotencyKeyBytes {
		return memory.Errorf(memory.ErrInvalidArgument, "server: an Idempotency-Key of %d bytes, the limit is %d", len(k), contract.MaxIdempotencyKeyBytes)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return memory.Errorf(memory.ErrInvalidArgument, "server: the Idempotency-Key is not printable ASCII")
		}
	}
	return nil
}

// begin looks key up for a request whose body hashes to hash. It returns
// the finished entry to replay, or a new entry the caller owns and must
// end; a request under the key in flight is waited for first, and a
// different body under the key is memory.ErrConflict.
func (p *replays) begin(ctx context.Context, key string, hash [sha256.Size]byte) (e *replay, own bool, err error) {
	for {
		p.mu.Lock()
		p.expire()
		e := p.entries[key]
		switch {
		case e == nil:
			e = &replay{hash: hash, done: make(chan struct{})}
			p.entries[key] = e
			p.mu.Unlock()
			return e, true, nil
		case e.hash != hash:
			p.mu.Unlock()
			return nil, false, memory.Errorf(memory.ErrConflict, "server: the Idempotency-Key was used for another request")
		case e.finished:
			p.mu.Unlock()
			return e, false, nil
		}
		p.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// end records the response of the request that owns e: kept when it
// succeeded, forgotten otherwise, so that a retry does it again.
func (p *replays) end(key string, e *replay, rep reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rep.status >= 200 && rep.status < 300 {
		e.finished, e.rep, e.expires = true, rep, p.clock.Now().Add(p.ttl)
		p.order = append(p.order, keyed{key, e})
		for len(p.order) > p.max {
			p.drop()
		}
	} else {
		delete(p.entries, key)
	}
	close(e.done)
}

// expire drops the finished entries whose time is up.
func (p *replays) expire() {
	now := p.clock.Now()
	for len(p.order) > 0 && !now.Before(p.order[0].e.expires) {
		p.drop()
	}
}

// drop forgets the oldest finished entry.
func (p *replays) drop() {
	k := p.order[0]
	p.order[0] = keyed{}
	p.order = p.order[1:]
	if p.entries[k.key] == k.e {
		delete(p.entries, k.key)
	}
}

// replayKey is the key a request's Idempotency-Key is remembered under:
// its identity, path and key, so no identity meets another's responses.
func replayKey(id memory.Identity, r *http.Request, key string) string {
	h := sha256.New()
	for _, s := range []string{id.Tenant, id.User, id.Agent, id.Instance, id.Squad, id.Session, r.URL.Path, key} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return string(h.Sum(nil))
}
