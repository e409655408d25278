package qdrantserver

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/qdrant/go-client/qdrant"
)

// pointID is a point id: an unsigned integer or a UUID.
type pointID struct {
	isUUID bool
	num    uint64
	uuid   [16]byte
}

// less orders ids as Qdrant's ExtendedPointId does (a derived Ord on
// `enum { NumId(u64), Uuid(Uuid) }`): every integer before every UUID,
// integers by value, UUIDs by their bytes.
func (a pointID) less(b pointID) bool {
	if a.isUUID != b.isUUID {
		return !a.isUUID
	}
	if !a.isUUID {
		return a.num < b.num
	}
	return bytes.Compare(a.uuid[:], b.uuid[:]) < 0
}

// proto returns the id as the client sees it; UUIDs in canonical form.
func (a pointID) proto() *qdrant.PointId {
	if !a.isUUID {
		return qdrant.NewIDNum(a.num)
	}
	return qdrant.NewIDUUID(a.String())
}

// String returns the number, or the UUID hyphenated in lower case.
func (a pointID) String() string {
	if !a.isUUID {
		return fmt.Sprint(a.num)
	}
	h := hex.EncodeToString(a.uuid[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// parseID reads a protobuf point id; a UUID may be hyphenated, simple
// (32 hex digits), braced or a urn:uuid: URN, as Rust's uuid crate accepts.
func parseID(p *qdrant.PointId) (pointID, error) {
	switch o := p.GetPointIdOptions().(type) {
	case *qdrant.PointId_Num:
		return pointID{num: o.Num}, nil
	case *qdrant.PointId_Uuid:
		u, ok := parseUUID(o.Uuid)
		if !ok {
			return pointID{}, badInput("Unable to parse UUID: %s", o.Uuid)
		}
		return pointID{isUUID: true, uuid: u}, nil
	}
	return pointID{}, badInput("No ID options provided")
}

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	s = strings.TrimPrefix(s, "urn:uuid:")
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	if len(s) == 36 {
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return u, false
		}
		s = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(s) != 32 {
		return u, false
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return u, false
	}
	copy(u[:], b)
	return u, true
}

// parseIDs reads a list of protobuf ids.
func parseIDs(ps []*qdrant.PointId) ([]pointID, error) {
	ids := make([]pointID, 0, len(ps))
	for _, p := range ps {
		id, err := parseID(p)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
