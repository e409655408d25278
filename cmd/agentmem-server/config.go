package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/telemetry/otlp"
	"github.com/agentmem/memory/tiers/tiered"
)

// config is what the service runs with, from flags and the environment.
type config struct {
	addr           string
	db             string // the SQLite file; unused with postgres
	postgres       string // a PostgreSQL DSN; empty for SQLite
	secretFile     string
	secret         string // AGENTMEM_TOKEN_SECRET
	trustedHeaders bool
	posture        memory.Posture
	metrics        bool
	otlpEndpoint   string         // where spans are exported over OTLP/HTTP; empty for nowhere
	tiers          tiered.Options // the window's budget, folding and workers
}

// defaultAddr is where the service listens unless told otherwise.
const defaultAddr = "127.0.0.1:8080"

// parseConfig reads the service's flags from args, each defaulting to its
// environment variable, then to its documented default.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fl := flag.NewFlagSet("agentmem-server", flag.ContinueOnError)
	fl.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envBool := func(name string) (bool, error) {
		v := getenv(name)
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, usageError{fmt.Sprintf("%s=%q is not a boolean", name, v)}
		}
		return b, nil
	}
	var err error
	var defaults struct{ trusted, principal, agentID bool }
	if defaults.trusted, err = envBool("AGENTMEM_TRUSTED_HEADERS"); err != nil {
		return c, err
	}
	if defaults.principal, err = envBool("MEMORY_REQUIRE_PRINCIPAL"); err != nil {
		return c, err
	}
	if defaults.agentID, err = envBool("MEMORY_REQUIRE_AGENT_IDENTITY"); err != nil {
		return c, err
	}
	fl.StringVar(&c.addr, "addr", env("AGENTMEM_ADDR", defaultAddr), "`host:port` to listen on (AGENTMEM_ADDR)")
	fl.StringVar(&c.db, "db", getenv("AGENTMEM_DB"), "the SQLite `file` (AGENTMEM_DB); default agentmem/server.db in the user cache directory")
	fl.StringVar(&c.postgres, "postgres", getenv("AGENTMEM_POSTGRES_DSN"), "a PostgreSQL `DSN` to store in instead of SQLite (AGENTMEM_POSTGRES_DSN)")
	fl.StringVar(&c.secretFile, "secret-file", getenv("AGENTMEM_SECRET_FILE"), "the `file` holding the bearer tokens' HS256 secret (AGENTMEM_SECRET_FILE); default agentmem/server.secret in the user cache directory, made when missing")
	fl.BoolVar(&c.trustedHeaders, "trusted-headers", defaults.trusted, "take the identity from the identity headers a sidecar set, without a token (AGENTMEM_TRUSTED_HEADERS)")
	fl.BoolVar(&c.posture.RequirePrincipal, "require-principal", defaults.principal, "writes without a user fail closed (MEMORY_REQUIRE_PRINCIPAL)")
	fl.BoolVar(&c.posture.RequireAgentIdentity, "require-agent-identity", defaults.agentID, "writes and reads without an agent fail closed (MEMORY_REQUIRE_AGENT_IDENTITY)")
	fl.BoolVar(&c.posture.AllowStore, "allow-store", false, "allow the administrative store scope to requests without an agent actor")
	fl.BoolVar(&c.metrics, "metrics", false, "serve OpenTelemetry metrics at GET /metrics in the Prometheus text format")
	fl.StringVar(&c.otlpEndpoint, "otlp-endpoint", otlpEndpointFromEnv(getenv), "export spans over OTLP/HTTP to the collector at `URL` (http://collector:4318, or a URL with its path, as in http://collector:4318/v1/traces); default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended; empty: none")
	fl.IntVar(&c.tiers.Budget, "budget", tiered.DefaultBudget, "the short-term window's token budget")
	fl.IntVar(&c.tiers.Trigger, "trigger", 0, "the unfolded tokens of a session above which it is folded; 0 means the budget")
	fl.IntVar(&c.tiers.Target, "target", 0, "the tokens a fold leaves unfolded; 0 means half the budget")
	fl.DurationVar(&c.tiers.IdleFlush, "idle-flush", tiered.DefaultIdleFlush, "how long after its last turn a session's tail is folded; negative never")
	fl.IntVar(&c.tiers.DigestRetention, "digest-retention", tiered.DefaultDigestRetention, "how many versions of a session's digest are kept")
	fl.IntVar(&c.tiers.Workers, "workers", tiered.DefaultWorkers, "how many folds this process runs at once")
	if err := fl.Parse(args); err != nil {
		return c, usageError{err.Error()}
	}
	if fl.NArg() > 0 {
		return c, usageError{fmt.Sprintf("unexpected arguments %q", fl.Args())}
	}
	if c.otlpEndpoint != "" {
		if _, err := otlp.TracesURL(c.otlpEndpoint); err != nil {
			return c, usageError{"-otlp-endpoint: " + err.Error()}
		}
	}
	c.secret = getenv("AGENTMEM_TOKEN_SECRET")
	if c.db == "" && c.postgres == "" {
		if c.db, err = cachePath("server.db"); err != nil {
			return c, err
		}
	}
	if c.secretFile == "" && c.secret == "" && !c.trustedHeaders {
		if c.secretFile, err = cachePath("server.secret"); err != nil {
			return c, err
		}
	}
	return c, nil
}

// otlpEndpointFromEnv returns where spans go by the standard environment
// variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the traces' own URL, or
// else OTEL_EXPORTER_OTLP_ENDPOINT, a base URL for every signal, with the
// traces' path appended to its own; "" when neither is set.
func otlpEndpointFromEnv(getenv func(string) string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v
	}
	if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return strings.TrimRight(v, "/") + otlp.TracesPath
	}
	return ""
}

// cachePath returns name in agentmem's directory of the user cache
// directory, making the directory.
func cachePath(name string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v): name the files with flags", err)
	}
	dir = filepath.Join(dir, "agentmem")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// loadSecret returns the bearer tokens' secret: AGENTMEM_TOKEN_SECRET, or
// the secret file's content less surrounding white space. A missing file
// is made, with a random secret, when create is set.
func loadSecret(c config, create bool) ([]byte, error) {
	if c.secret != "" {
		return checkSecret([]byte(c.secret), "AGENTMEM_TOKEN_SECRET")
	}
	b, err := os.ReadFile(c.secretFile)
	if errors.Is(err, fs.ErrNotExist) && create {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, err
		}
		secret := hex.EncodeToString(raw)
		f, err := os.OpenFile(c.secretFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) { // made at the same time by another process
			return loadSecret(c, false)
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.WriteString(secret + "\n"); err != nil {
			_ = f.Close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return nil, err
		}
		return []byte(secret), f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token secret: %w", err)
	}
	return checkSecret([]byte(strings.TrimSpace(string(b))), c.secretFile)
}

// checkSecret refuses a secret shorter than the verifier accepts.
func checkSecret(b []byte, from string) ([]byte, error) {
	if len(b) < server.MinSecretBytes {
		return nil, usageError{fmt.Sprintf("the token secret in %s has %d bytes; at least %d are needed", from, len(b), server.MinSecretBytes)}
	}
	return b, nil
}
