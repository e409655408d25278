package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
)

// MinSecretBytes is the shortest HS256 secret accepted: 256 bits, the
// hash's own size.
const MinSecretBytes = 32

// MaxTokenBytes is the longest bearer token read.
const MaxTokenBytes = 8 << 10

// BearerOptions configure BearerTokens.
type BearerOptions struct {
	// Secret is the HS256 key shared with the token issuer, at least
	// MinSecretBytes bytes.
	Secret []byte
	// Issuer, when not empty, is the iss a token must carry.
	Issuer string
	// Audience, when not empty, is an aud a token must carry.
	Audience string
	// Leeway is how far exp and nbf may be passed, for clocks that differ;
	// zero means none.
	Leeway time.Duration
	// Clock is the time exp and nbf are checked at; nil means time.Now.
	Clock memory.Clock
}

// BearerTokens verifies JSON Web Tokens in compact form, signed with
// HS256 over a shared secret, from the header "Authorization: Bearer
// <token>". Any other alg, "none" included, is refused. exp and nbf are
// checked when the token has them, iss and aud when BearerOptions name
// them. The claims give the identity's tenant (claim "tenant"), user
// ("sub") and agent ("agent"); its session, instance and squad come from the
// identity headers. A tenant, user or agent header that names another
// value than the token's (one the token has empty included) is
// memory.ErrPermissionDenied.
type BearerTokens struct {
	opt BearerOptions
}

// NewBearerTokens returns the verifier of tokens signed with opt.Secret;
// a shorter secret than MinSecretBytes is memory.ErrInvalidArgument.
func NewBearerTokens(opt BearerOptions) (*BearerTokens, error) {
	if len(opt.Secret) < MinSecretBytes {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "server: a bearer secret of %d bytes; at least %d are needed", len(opt.Secret), MinSecretBytes)
	}
	if opt.Leeway < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "server: negative leeway")
	}
	opt.Secret = bytes.Clone(opt.Secret)
	return &BearerTokens{opt: opt}, nil
}

// Challenge names the scheme in a 401's WWW-Authenticate header.
func (b *BearerTokens) Challenge() string { return `Bearer realm="agentmem"` }

// Authenticate verifies the request's token and returns its identity,
// completed by the session, instance and squad headers.
func (b *BearerTokens) Authenticate(r *http.Request) (memory.Identity, error) {
	auth := r.Header.Values("Authorization")
	if len(auth) != 1 {
		return memory.Identity{}, unauthenticated("no bearer token")
	}
	scheme, token, ok := strings.Cut(auth[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return memory.Identity{}, unauthenticated("the Authorization header is not a bearer token")
	}
	c, err := b.verify(token)
	if err != nil {
		return memory.Identity{}, err
	}
	id := memory.Identity{Tenant: c.Tenant, User: c.Subject, Agent: c.Agent}
	for _, h := range contract.IdentityHeaders {
		v, named, err := header(r, h.Name)
		if err != nil {
			return memory.Identity{}, err
		}
		switch h.Field {
		case memory.FieldTenant, memory.FieldUser, memory.FieldAgent:
			if named && v != id.Get(h.Field) {
				return memory.Identity{}, memory.Errorf(memory.ErrPermissionDenied, "server: header %s names another identity than the bearer token", h.Name)
			}
		default:
			id = id.With(h.Field, v)
		}
	}
	if err := id.Validate(); err != nil {
		return memory.Identity{}, err
	}
	return id, nil
}

// Claims are the claims of a token this package reads, and writes with
// SignToken.
type Claims struct {
	Issuer   string   `json:"iss,omitempty"`
	Subject  string   `json:"sub,omitempty"`
	Audience Audience `json:"aud,omitempty"`
	// Expires and NotBefore are unix seconds; zero means absent.
	Expires   float64 `json:"exp,omitempty"`
	NotBefore float64 `json:"nbf,omitempty"`
	Tenant    string  `json:"tenant,omitempty"`
	Agent     string  `json:"agent,omitempty"`
}

// Audience is the aud claim: one string or an array of strings.
type Audience []string

// UnmarshalJSON reads one string or an array of strings.
func (a *Audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Audience{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(a))
}

// joseHeader is a token's header.
type joseHeader struct {
	Alg  string   `json:"alg"`
	Typ  string   `json:"typ,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// verify checks token's form, alg and signature, then its times, issuer
// and audience, and returns its claims.
func (b *BearerTokens) verify(token string) (Claims, error) {
	if len(token) > MaxTokenBytes {
		return Claims{}, unauthenticated("the bearer token is over the size limit")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, unauthenticated("the bearer token is not a compact JWS")
	}
	var h joseHeader
	if err := decodeSegment(parts[0], &h); err != nil {
		return Claims{}, unauthenticated("the token's header does not decode")
	}
	switch {
	case h.Alg != "HS256":
		return Claims{}, unauthenticated("the token's alg is not HS256")
	case len(h.Crit) > 0:
		return Claims{}, unauthenticated("the token names critical extensions")
	case h.Typ != "" && !strings.EqualFold(h.Typ, "JWT"):
		return Claims{}, unauthenticated("the token's typ is not JWT")
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, sign(b.opt.Secret, parts[0]+"."+parts[1])) {
		return Claims{}, unauthenticated("the token's signature does not verify")
	}
	var c Claims
	if err := decodeSegment(parts[1], &c); err != nil {
		return Claims{}, unauthenticated("the token's claims do not decode")
	}
	now := b.opt.Clock.Now()
	leeway := b.opt.Leeway.Seconds()
	at := float64(now.UnixNano()) / 1e9
	switch {
	case c.Expires != 0 && at >= c.Expires+leeway:
		return Claims{}, unauthenticated("the token has expired")
	case c.NotBefore != 0 && at < c.NotBefore-leeway:
		return Claims{}, unauthenticated("the token is not valid yet")
	case b.opt.Issuer != "" && c.Issuer != b.opt.Issuer:
		return Claims{}, unauthenticated("the token's issuer is not the one trusted")
	case b.opt.Audience != "" && !contains(c.Audience, b.opt.Audience):
		return Claims{}, unauthenticated("the token is not for this audience")
	}
	return c, nil
}

// SignToken returns claims as a compact JWS signed with HS256 under
// secret: what BearerTokens verifies, for issuers and tests.
func SignToken(secret []byte, c Claims) (string, error) {
	if len(secret) < MinSecretBytes {
		return "", memory.Errorf(memory.ErrInvalidArgument, "server: a signing secret of %d bytes; at least %d are needed", len(secret), MinSecretBytes)
	}
	h, _ := json.Marshal(joseHeader{Alg: "HS256", Typ: "JWT"})
	p, err := json.Marshal(c)
	if err != nil {
		return "", memory.Wrap(memory.ErrInvalidArgument, err, "server: claims")
	}
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	return signing + "." + base64.RawURLEncoding.EncodeToString(sign(secret, signing)), nil
}

func sign(secret []byte, signing string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signing))
	return m.Sum(nil)
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.Strict().DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func contains(a Audience, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

func unauthenticated(msg string) error {
	return memory.Errorf(contract.ErrUnauthenticated, "server: %s", msg)
}
