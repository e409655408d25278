package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/tiers/tiered"
)

// Server is the memory service's http.Handler over one tiered Memory. It
// is safe for concurrent use.
type Server struct {
	mem     tiered.Interface // the Memory's calls, wrapped by Options.Wrap
	memory  *tiered.Memory   // closed by Shutdown
	opt     Options
	replays *replays

	mu       sync.Mutex
	closing  bool
	inflight int
	idle     chan struct{} // closed once closing and no request is in flight
	idled    bool

	closeOnce sync.Once
	closed    chan struct{} // closed when the Memory is closed
	closeErr  error
}

// New returns the server of mem. A nil mem or a missing
// Options.Authenticator, and options out of range, are
// memory.ErrInvalidArgument. The Server owns mem from then on: Shutdown
// closes it.
func New(mem *tiered.Memory, opt Options) (*Server, error) {
	if mem == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "server: nil memory")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	var calls tiered.Interface = mem
	if opt.Wrap != nil {
		if calls = opt.Wrap(mem); calls == nil {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "server: Options.Wrap returned nil")
		}
	}
	return &Server{
		mem: calls, memory: mem, opt: opt,
		replays: newReplays(opt.IdempotencyTTL, opt.IdempotencyKeys, opt.Clock),
		idle:    make(chan struct{}), closed: make(chan struct{}),
	}, nil
}

// handler does one API call for identity id with the request's body.
type handler func(s *Server, ctx context.Context, id memory.Identity, body []byte) (reply, error)

// routes are the API's paths; idempotent says which honour an
// Idempotency-Key.
var routes = map[string]struct {
	h          handler
	idempotent bool
}{
	contract.PathRecall: {(*Server).recall, false},
	contract.PathList:   {(*Server).list, false},
	contract.PathWrite:  {(*Server).writeCall, true},
	contract.PathForget: {(*Server).forget, true},
}

// ServeHTTP answers the contract's paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case contract.PathHealth:
		s.health(w, r)
		return
	case contract.PathReady:
		s.ready(w, r)
		return
	}
	route, ok := routes[r.URL.Path]
	if !ok {
		s.write(w, s.errorReply(r, memory.Errorf(memory.ErrNotFound, "server: no endpoint %s", r.URL.Path)))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.write(w, s.errorReply(r, &contract.Error{Class: contract.ClassMethodNotAllowed, Message: "server: " + r.URL.Path + " takes POST"}))
		return
	}
	if !s.enter() {
		s.write(w, s.errorReply(r, memory.Errorf(memory.ErrClosed, "server: shutting down")))
		return
	}
	defer s.leave()
	rc := http.NewResponseController(w)
	now := time.Now()
	_ = rc.SetReadDeadline(now.Add(s.opt.ReadTimeout)) // ErrNotSupported leaves the server's own
	_ = rc.SetWriteDeadline(now.Add(s.opt.WriteTimeout))
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.HandlerTimeout)
	defer cancel()
	s.write(w, s.serve(ctx, w, r, route.h, route.idempotent))
}

// serve authenticates r, reads its body and runs h, through the
// idempotency keys when the route honours them.
func (s *Server) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, h handler, idempotent bool) reply {
	id, err := s.opt.Authenticator.Authenticate(r)
	if err != nil {
		return s.errorReply(r, err)
	}
	body, err := readBody(w, r, s.opt.MaxBodyBytes)
	if err != nil {
		return s.errorReply(r, err)
	}
	run := func() reply {
		rep, err := h(s, ctx, id, body)
		if err != nil {
			return s.errorReply(r, err)
		}
		return rep
	}
	key, named, err := header(r, contract.HeaderIdempotencyKey)
	if err != nil {
		return s.errorReply(r, err)
	}
	if !idempotent || !named {
		return run()
	}
	ctx = context.WithValue(ctx, idempotencyKey{}, key)
	if err := checkKey(key); err != nil {
		return s.errorReply(r, err)
	}
	rk := replayKey(id, r, key)
	e, own, err := s.replays.begin(ctx, rk, sha256.Sum256(body))
	if err != nil {
		return s.errorReply(r, err)
	}
	if !own {
		w.Header().Set(contract.HeaderReplayed, "true")
		return e.rep
	}
	rep := run()
	s.replays.end(rk, e, rep)
	return rep
}

// idempotencyKey is the context key of a request's Idempotency-Key.
type idempotencyKey struct{}

// enter admits a request, unless Shutdown began.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.inflight++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	s.idleIfDone()
}

// idleIfDone closes idle once shutting down with nothing in flight.
// s.mu is held.
func (s *Server) idleIfDone() {
	if s.closing && s.inflight == 0 && !s.idled {
		s.idled = true
		close(s.idle)
	}
}

// Shutdown stops taking requests (new ones are 503, class closed, and
// /readyz is 503), waits for those in flight, then closes the Memory,
// which lets its background folds in flight finish. It returns ctx's error
// if ctx ends first; calling it again waits again. It does not stop an
// http.Server: shut that down too, after, so that its connections close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.idleIfDone()
	s.mu.Unlock()
	select {
	case <-s.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.closeOnce.Do(func() {
		go func() {
			s.closeErr = s.memory.Close()
			close(s.closed)
		}()
	})
	select {
	case <-s.closed:
		return s.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refuseStore refuses the store scope to an agent actor: the store view
// is administrative.
func refuseStore(id memory.Identity, scope memory.Level) error {
	if scope == memory.LevelStore && id.Agent != "" {
		return memory.Errorf(memory.ErrPermissionDenied, "server: the store scope is administrative; a request with an agent actor cannot use it")
	}
	return nil
}
