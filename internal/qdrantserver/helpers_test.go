package qdrantserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// connect starts a server and returns the official client connected to it
// over a real localhost gRPC connection. The compatibility check is skipped
// here only because a test binary's client reports its own version as
// "Unknown" and logs a warning; TestHealthCheck runs it.
func connect(t *testing.T) *qdrant.Client {
	t.Helper()
	host, port := Start(t)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: port, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// must returns v, failing the test given to its result if err is not nil:
// must(c.Count(ctx, req))(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

var wait = qdrant.PtrOf(true)

// upsert writes points and fails the test on error.
func upsert(t *testing.T, c *qdrant.Client, name string, ps ...*qdrant.PointStruct) {
	t.Helper()
	res := must(c.Upsert(context.Background(), &qdrant.UpsertPoints{CollectionName: name, Wait: wait, Points: ps}))(t)
	if res.GetStatus() != qdrant.UpdateStatus_Completed {
		t.Fatalf("upsert status %v, want Completed", res.GetStatus())
	}
}

// idString renders an id as the tests write it.
func idString(id *qdrant.PointId) string {
	if u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid); ok {
		return u.Uuid
	}
	return fmt.Sprint(id.GetNum())
}

func retrievedIDs(ps []*qdrant.RetrievedPoint) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, idString(p.GetId()))
	}
	return out
}

func scoredIDs(ps []*qdrant.ScoredPoint) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, idString(p.GetId()))
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wantCode checks an error's gRPC status code through the client's wrapping.
func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", code)
	}
	var qe *qdrant.QdrantError
	if !errors.As(err, &qe) {
		t.Fatalf("error %v is not the client's QdrantError", err)
	}
	if got := status.Code(errors.Unwrap(qe)); got != code {
		t.Fatalf("code %v (%v), want %v", got, err, code)
	}
}

// wantScores checks ids and scores of a result, scores to 1e-6.
func wantScores(t *testing.T, got []*qdrant.ScoredPoint, ids []string, scores []float64) {
	t.Helper()
	if !sameStrings(scoredIDs(got), ids) {
		t.Fatalf("ids %v, want %v", scoredIDs(got), ids)
	}
	for i, p := range got {
		if math.Abs(float64(p.GetScore())-scores[i]) > 1e-6 {
			t.Fatalf("score of %s = %v, want %v", ids[i], p.GetScore(), scores[i])
		}
	}
}
