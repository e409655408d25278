package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/server"
)

// runToken prints a bearer token for an identity, signed with the
// server's secret (found as the service finds it, made when missing).
func runToken(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("agentmem-server token", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var claims server.Claims
	var ttl time.Duration
	var secretFile string
	fl.StringVar(&claims.Tenant, "tenant", "", "the identity's `tenant` (required)")
	fl.StringVar(&claims.Subject, "user", "", "the identity's `user` (the principal; the token's sub)")
	fl.StringVar(&claims.Agent, "agent", "", "the identity's `agent`")
	fl.DurationVar(&ttl, "ttl", 24*time.Hour, "how long the token is valid")
	fl.StringVar(&secretFile, "secret-file", getenv("AGENTMEM_SECRET_FILE"), "the `file` holding the secret, as for the service")
	if err := fl.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fl.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected arguments %q", fl.Args())}
	}
	id := memory.Identity{Tenant: claims.Tenant, User: claims.Subject, Agent: claims.Agent}
	if id.Tenant == "" {
		return usageError{"-tenant is required"}
	}
	if err := id.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if ttl <= 0 {
		return usageError{"-ttl must be positive"}
	}
	c := config{secretFile: secretFile, secret: getenv("AGENTMEM_TOKEN_SECRET")}
	if c.secretFile == "" && c.secret == "" {
		var err error
		if c.secretFile, err = cachePath("server.secret"); err != nil {
			return err
		}
	}
	secret, err := loadSecret(c, true)
	if err != nil {
		return err
	}
	claims.Expires = float64(time.Now().Add(ttl).Unix())
	tok, err := server.SignToken(secret, claims)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}
