package qdrant

import (
	"cmp"
	"context"
	"slices"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// tiePage is how many points one request of a boundary's tie group reads.
const tiePage = 1000

// candidate is a point a search found, with the score the driver ranks
// it by.
type candidate struct {
	pt      *qc.ScoredPoint
	score   float64
	created int64
	id      string // the record id
	// rec is the record, when the point was read whole (searchFields).
	rec *memory.Record
}

// compareCandidates orders candidates best first: score descending, then
// List order (created descending, then id descending).
func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.created, a.created); c != 0 {
		return c
	}
	return cmp.Compare(b.id, a.id)
}

// scoreFunc sets c.score, the score the driver ranks c.pt by.
type scoreFunc func(c *candidate) error

// byQdrant ranks a point by the score Qdrant gave it.
func byQdrant(c *candidate) error {
	c.score = float64(c.pt.GetScore())
	return nil
}

// rank runs the query req and returns its k best points by score, ties in
// List order. Qdrant leaves points of equal scores in no defined order,
// so rank reads one point more than k: when the k-th best score is not
// above the score Qdrant gave the last point read by more than slack
// (how far the driver's score of a point may be from Qdrant's), the
// points beyond may tie with or beat the k-th, and rank reads every point
// Qdrant scores at least the k-th's score less slack (the boundary's tie
// group, tiePage points a request) and ranks them all. The cost is one
// request, or more and the size of that group.
func (d *Driver) rank(ctx context.Context, req *qc.QueryPoints, k int, score scoreFunc, slack float64) ([]candidate, error) {
	req.Limit = qc.PtrOf(uint64(k + 1))
	pts, err := d.query(ctx, req)
	if err != nil {
		return nil, err
	}
	cands, err := candidates(pts, score, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cands, compareCandidates)
	if len(pts) <= k || cands[k-1].score-float64(pts[len(pts)-1].GetScore()) > slack {
		return cands[:min(k, len(cands))], nil
	}
	req.ScoreThreshold = qc.PtrOf(float32(cands[k-1].score - slack))
	req.Limit = qc.PtrOf(uint64(tiePage))
	seen := map[string]bool{}
	cands = cands[:0]
	for offset := uint64(0); ; offset += tiePage {
		req.Offset = qc.PtrOf(offset)
		pts, err := d.query(ctx, req)
		if err != nil {
			return nil, err
		}
		if cands, err = candidates(pts, score, seen); err != nil {
			return nil, err
		}
		if len(pts) < tiePage {
			break
		}
	}
	slices.SortFunc(cands, compareCandidates)
	return cands[:min(k, len(cands))], nil
}

// candidates appends the points pts to a new slice of candidates, scored
// by score, leaving out those seen holds (when not nil) and adding the
// others to it.
func candidates(pts []*qc.ScoredPoint, score scoreFunc, seen map[string]bool) ([]candidate, error) {
	out := make([]candidate, 0, len(pts))
	for _, pt := range pts {
		if seen != nil {
			id := pointString(pt.GetId())
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		c := candidate{pt: pt}
		if _, whole := pt.GetPayload()[fRecord]; whole {
			rec, err := decode(pt.GetId(), pt.GetPayload(), pt.GetVectors())
			if err != nil {
				return nil, err
			}
			c.rec, c.id, c.created = &rec, rec.ID, rec.Created.UnixNano()
		} else {
			pr := &payloadReader{p: pt.GetPayload()}
			c.id, c.created = pr.str(fRecordID), pr.int(fCreated)
			if pr.bad != "" {
				return nil, errNotRecord(pointString(pt.GetId()), pr.bad)
			}
		}
		if err := score(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// query runs a Query API request and returns its points.
func (d *Driver) query(ctx context.Context, req *qc.QueryPoints) ([]*qc.ScoredPoint, error) {
	resp, err := d.points().Query(ctx, req, recvOpt)
	if err != nil {
		return nil, classify(ctx, err, "qdrant: query")
	}
	return resp.GetResult(), nil
}

// refFields are the payload keys a driver.Ref is read from.
var refFields = func() []string {
	out := []string{fRecordID, fKind, fCreated, fSpeaker, fAsks}
	for _, f := range identityFields {
		out = append(out, f.name)
	}
	return out
}()

// readRef returns the driver.Ref a point's payload (at least refFields)
// holds.
func readRef(pt *qc.ScoredPoint) (driver.Ref, error) {
	pr := &payloadReader{p: pt.GetPayload()}
	ref := driver.Ref{
		ID:       pr.str(fRecordID),
		Kind:     memory.Kind(pr.str(fKind)),
		Identity: pr.identity(),
		Created:  time.Unix(0, pr.int(fCreated)).UTC(),
	}
	ref.Speaker, _ = pr.optStr(fSpeaker)
	if v, ok := pr.p[fAsks].GetKind().(*qc.Value_BoolValue); ok {
		ref.Asks = v.BoolValue
	} else {
		pr.fail(fAsks)
	}
	if pr.bad != "" {
		return driver.Ref{}, errNotRecord(pointString(pt.GetId()), pr.bad)
	}
	return ref, nil
}

// matches returns the records of cands, read whole, as matches.
func matches(cands []candidate) ([]driver.Match, error) {
	out := make([]driver.Match, len(cands))
	for i, c := range cands {
		if c.rec == nil {
			return nil, errNotRecord(pointString(c.pt.GetId()), fRecord)
		}
		out[i] = driver.Match{Record: *c.rec, Score: c.score}
	}
	return out, nil
}

// refMatches returns the Refs of cands as matches.
func refMatches(cands []candidate) ([]driver.RefMatch, error) {
	out := make([]driver.RefMatch, len(cands))
	for i, c := range cands {
		ref, err := readRef(c.pt)
		if err != nil {
			return nil, err
		}
		out[i] = driver.RefMatch{Ref: ref, Score: c.score}
	}
	return out, nil
}

// searchFields are the payload keys a search reads to return records
// whole: a record's (recordFields), which holds the id and creation time
// ties are ordered by; the search reads the record's vector (withRaw)
// too.
var searchFields = recordFields

// withPayload selects the payload keys include, or when nil a search's
// (searchFields).
func withPayload(include []string) *qc.WithPayloadSelector {
	if include == nil {
		include = searchFields
	}
	return qc.NewWithPayloadInclude(include...)
}

// readAll asks a read for consistency from all replicas.
func readAll() *qc.ReadConsistency {
	return qc.NewReadConsistencyType(qc.ReadConsistencyType_All)
}
