package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/tiers/tiered"
)

// Defaults of Options.
const (
	// DefaultRecallTimeout bounds a recall, its retries included.
	DefaultRecallTimeout = 2 * time.Second
	// DefaultMaxAttempts is how many times a call is tried.
	DefaultMaxAttempts = 3
	// DefaultBackoff is the wait before the first retry; each retry waits
	// twice as long as the last, at most MaxBackoff, half of it random.
	DefaultBackoff = 100 * time.Millisecond
	// MaxBackoff is the longest wait between two attempts.
	MaxBackoff = 2 * time.Second
	// DefaultMaxResponseBytes is the largest response read.
	DefaultMaxResponseBytes = 64 << 20
)

// Options configure a Client. The zero value is the documented default.
type Options struct {
	// HTTPClient sends the requests; nil means a client of its own over
	// http.DefaultTransport. Its own Timeout, if any, applies to each
	// attempt.
	HTTPClient *http.Client
	// Token is the bearer token sent with every request; empty sends
	// none, for a server that takes the identity headers from a trusted
	// sidecar.
	Token string
	// Level is the level a recall reads facts at when its RecallOptions
	// name none (Recall always): memory.LevelSession, LevelAgent, LevelUser
	// or LevelStore, as tiered.Options.Level is for a Memory. Empty means
	// memory.LevelSession.
	Level memory.Level
	// RecallTimeout bounds RecallWith and Recall, retries included; past
	// it the recollection is degraded. Zero means DefaultRecallTimeout.
	RecallTimeout time.Duration
	// MaxAttempts is how many times a call is tried; zero means
	// DefaultMaxAttempts, 1 never retries.
	MaxAttempts int
	// Backoff is the wait before the first retry; zero means
	// DefaultBackoff.
	Backoff time.Duration
	// MaxResponseBytes is the largest response body read; a larger one is
	// memory.ErrTooLarge. Zero means DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Client is a client of the memory service. It is safe for concurrent
// use.
type Client struct {
	base string
	opt  Options
}

var _ tiered.Interface = (*Client)(nil)

// New returns a client of the service at baseURL (scheme http or https,
// and a host; a path is a prefix of the contract's paths). A malformed
// URL or options out of range are memory.ErrInvalidArgument.
func New(baseURL string, opt Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "client: base URL %q is not an http or https URL with a host", baseURL)
	}
	if opt.RecallTimeout < 0 || opt.MaxAttempts < 0 || opt.Backoff < 0 || opt.MaxResponseBytes < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "client: negative option")
	}
	if strings.ContainsAny(opt.Token, "\r\n") {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "client: the token contains a line break")
	}
	if opt.Level == "" {
		opt.Level = memory.LevelSession
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{}
	}
	if opt.RecallTimeout == 0 {
		opt.RecallTimeout = DefaultRecallTimeout
	}
	if opt.MaxAttempts == 0 {
		opt.MaxAttempts = DefaultMaxAttempts
	}
	if opt.Backoff == 0 {
		opt.Backoff = DefaultBackoff
	}
	if opt.MaxResponseBytes == 0 {
		opt.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), opt: opt}, nil
}

// call is one call of the contract: its path, its request and where its
// response goes; once marks a write or an erasure, sent with one
// Idempotency-Key for all its attempts.
type call struct {
	path string
	req  any
	resp any
	once bool
}

// do sends c for id, trying again after transport errors and 503s. It
// returns the response's status.
func (cl *Client) do(ctx context.Context, id memory.Identity, c call) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := id.Validate(); err != nil {
		return 0, err
	}
	body, err := json.Marshal(c.req)
	if err != nil {
		return 0, memory.Wrap(memory.ErrInvalidArgument, err, "client: encoding the request")
	}
	var key string
	if c.once {
		key = newKey()
	}
	var last error
	for attempt := range cl.opt.MaxAttempts {
		if attempt > 0 {
			if err := cl.wait(ctx, attempt); err != nil {
				return 0, err
			}
		}
		status, err := cl.send(ctx, id, c, body, key)
		if err == nil || !retryable(err) {
			return status, err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		last = err
	}
	if te := (*transportError)(nil); errors.As(last, &te) {
		return 0, te.err
	}
	return 0, last
}

// send makes one attempt.
func (cl *Client) send(ctx context.Context, id memory.Identity, c call, body []byte, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.base+c.path, bytes.NewReader(body))
	if err != nil {
		return 0, memory.Wrap(memory.ErrInvalidArgument, err, "client: making the request")
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if cl.opt.Token != "" {
		h.Set("Authorization", "Bearer "+cl.opt.Token)
	}
	for _, f := range contract.IdentityHeaders {
		if v := id.Get(f.Field); v != "" {
			h.Set(f.Name, v)
		}
	}
	if key != "" {
		h.Set(contract.HeaderIdempotencyKey, key)
	}
	resp, err := cl.opt.HTTPClient.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return 0, &transportError{memory.Wrap(memory.ErrUnavailable, err, "client: the memory service could not be reached")}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, cl.opt.MaxResponseBytes+1))
	switch {
	case err != nil:
		if ctxErr := ctx.Err(); ctxErr != nil {
			return 0, ctxErr
		}
		return 0, &transportError{memory.Wrap(memory.ErrUnavailable, err, "client: reading the response")}
	case int64(len(b)) > cl.opt.MaxResponseBytes:
		return 0, memory.Errorf(memory.ErrTooLarge, "client: a response over %d bytes", cl.opt.MaxResponseBytes)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return resp.StatusCode, serviceError(resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, c.resp); err != nil {
		return 0, memory.Wrap(memory.ErrUnavailable, err, "client: the service's response does not decode")
	}
	return resp.StatusCode, nil
}

// transportError is a failure to exchange a request and its response:
// worth trying again.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// retryable reports whether another attempt may succeed: after a
// transport error or a 503.
func retryable(err error) bool {
	var te *transportError
	var ce *contract.Error
	return errors.As(err, &te) || errors.As(err, &ce) && ce.Class.Status() == http.StatusServiceUnavailable
}

// serviceError reads an error response: its body's error, or for a body
// that is none (a proxy's), the class of its status.
func serviceError(status int, body []byte) error {
	var e contract.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Class != "" {
		return &e.Error
	}
	return &contract.Error{Class: contract.ClassOfStatus(status), Message: fmt.Sprintf("client: the memory service answered HTTP %d", status)}
}

// wait sleeps before attempt (1 for the first retry): Backoff doubled
// per attempt, at most MaxBackoff, its second half random.
func (cl *Client) wait(ctx context.Context, attempt int) error {
	d := cl.opt.Backoff << (attempt - 1)
	if d > MaxBackoff || d <= 0 {
		d = MaxBackoff
	}
	d = d/2 + mrand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newKey returns a fresh Idempotency-Key: 128 random bits in hex.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
