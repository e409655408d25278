package server

import (
	"encoding/json"
	"net/http"

	"github.com/agentmem/memory/contract"
)

// reply is a response to write: a status and a body.
type reply struct {
	status int
	body   []byte
}

// jsonReply marshals v as a response of status.
func jsonReply(status int, v any) (reply, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return reply{}, err
	}
	return reply{status: status, body: b}, nil
}

// errorReply is err's response: its class's status and the error body.
// An unclassified error's message is not sent: it is logged.
func (s *Server) errorReply(r *http.Request, err error) reply {
	e := contract.NewError(err)
	if e.Class == contract.ClassInternal {
		s.opt.Logger.Error("server: internal error", "path", r.URL.Path, "err", err)
		e.Message = "server: internal error"
	}
	b, _ := json.Marshal(contract.ErrorBody{Error: e})
	return reply{status: e.Class.Status(), body: b}
}

// write sends rep, with the WWW-Authenticate challenge on a 401 when the
// authenticator has one.
func (s *Server) write(w http.ResponseWriter, rep reply) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if rep.status == http.StatusUnauthorized {
		if c, ok := s.opt.Authenticator.(interface{ Challenge() string }); ok {
			h.Set("WWW-Authenticate", c.Challenge())
		}
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}
