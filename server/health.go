package server

import (
	"context"
	"net/http"
	"time"

	"github.com/agentmem/memory"
)

// readyProbe is the identity /readyz reads an (empty) window as: every
// field a posture may require is set, so the read reaches the store.
var readyProbe = memory.Identity{Tenant: "agentmem-readyz", User: "readyz", Agent: "readyz", Session: "readyz"}

// readyTimeout bounds /readyz's read of the store.
const readyTimeout = 2 * time.Second

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	s.write(w, reply{status: http.StatusOK, body: []byte(`{"status":"ok"}`)})
}

// ready reads the probe's window: the store answers, or the server is
// not ready.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		s.write(w, s.errorReply(r, memory.Errorf(memory.ErrClosed, "server: shutting down")))
		return
	}
	defer s.leave()
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if _, err := s.mem.Window(ctx, readyProbe, 0); err != nil {
		s.write(w, s.errorReply(r, &memory.Error{Kind: memory.ErrUnavailable, Msg: "server: the store cannot be read", Err: err}))
		return
	}
	s.write(w, reply{status: http.StatusOK, body: []byte(`{"status":"ready"}`)})
}
