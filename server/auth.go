package server

import (
	"net/http"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// Authenticator derives the identity a request acts as from its
// credentials. It fails with contract.ErrUnauthenticated for missing or
// invalid credentials (401), memory.ErrPermissionDenied for credentials
// that do not allow what the request claims (403) and
// memory.ErrInvalidArgument for malformed identity headers (400). An
// Authenticator that also has a method Challenge() string names its
// scheme in the WWW-Authenticate header of the 401 responses.
type Authenticator interface {
	Authenticate(r *http.Request) (memory.Identity, error)
}

// TrustedHeaders takes every identity field from the identity headers
// (contract.HeaderTenant and the others): for a server that only a sidecar
// reaches, the sidecar having authenticated the caller and set the headers.
// A request without any identity header is 401.
type TrustedHeaders struct{}

// Authenticate returns the identity the headers name.
func (TrustedHeaders) Authenticate(r *http.Request) (memory.Identity, error) {
	var id memory.Identity
	named := false
	for _, h := range contract.IdentityHeaders {
		v, ok, err := header(r, h.Name)
		if err != nil {
			return memory.Identity{}, err
		}
		named = named || ok
		id = id.With(h.Field, v)
	}
	if !named {
		return memory.Identity{}, memory.Errorf(contract.ErrUnauthenticated, "server: no identity headers")
	}
	if err := id.Validate(); err != nil {
		return memory.Identity{}, err
	}
	return id, nil
}

// header returns the value of the header name and whether the request
// has it with a value; a header given twice is ambiguous and refused.
func header(r *http.Request, name string) (string, bool, error) {
	vs := r.Header.Values(name)
	switch {
	case len(vs) > 1:
		return "", false, memory.Errorf(memory.ErrInvalidArgument, "server: header %s is given %d times", name, len(vs))
	case len(vs) == 0 || vs[0] == "":
		return "", false, nil
	}
	return vs[0], true, nil
}
