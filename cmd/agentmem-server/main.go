// Command agentmem-server runs the tiered memory as an HTTP service (the
// contract of package contract, served by package server) on the embedded
// default — one SQLite file — or on PostgreSQL:
//
//	go run ./cmd/agentmem-server
//
// listens on 127.0.0.1:8080. Every request needs credentials: a bearer
// token (HS256) signed with the server's secret, or, with
// -trusted-headers, identity headers set by a sidecar that verified them.
// A request without valid credentials is 401. Without -secret-file or
// AGENTMEM_TOKEN_SECRET the server makes a random secret once and keeps it
// beside the database (mode 0600); the token subcommand signs a token
// with the same secret for a development client:
//
//	go run ./cmd/agentmem-server token -tenant acme -user alice -agent helper
//
// Flags may also be set from the environment: AGENTMEM_ADDR, AGENTMEM_DB,
// AGENTMEM_POSTGRES_DSN, AGENTMEM_TOKEN_SECRET (the secret itself),
// AGENTMEM_SECRET_FILE, AGENTMEM_TRUSTED_HEADERS, and the service
// document's posture flags MEMORY_REQUIRE_PRINCIPAL and
// MEMORY_REQUIRE_AGENT_IDENTITY. A flag given on the command line wins.
//
// -metrics serves OpenTelemetry metrics at GET /metrics (Prometheus text
// format); -otlp-endpoint, or OpenTelemetry's OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// or OTEL_EXPORTER_OTLP_ENDPOINT, exports spans over OTLP/HTTP. Neither
// carries content or identities.
//
// SIGINT or SIGTERM shuts it down gracefully: no new requests, those in
// flight finish, background folds in flight finish, then it exits.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentmem-server:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for a usage error, 1 otherwise.
func exitCode(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	return 1
}

// usageError is a command line the program cannot run.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run runs the command line args: the service, or a subcommand. getenv
// reads the environment; what the program says goes to stdout, its log
// to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "token" {
		return runToken(args[1:], getenv, stdout, stderr)
	}
	return runServer(ctx, args, getenv, stdout, stderr)
}
