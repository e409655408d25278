package fs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
)

// validFrames returns frames the driver writes: a batch of records with
// every field set, and a batch of tombstones.
func validFrames() [][]byte {
	who := memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"}
	r := memory.Record{ID: "id-1", Kind: memory.KindDocument, Identity: who, Label: "l", Key: "k", Content: `{"content":true}`,
		Metadata: map[string]string{"a": "1", "b": "2"}, Created: time.Unix(1, 2), Expires: time.Unix(3, 4),
		Tokens: 7, Vector: []float32{1, -2, 0.5}}
	put := newEncoder(opPut, 2)
	put.record(r, 3)
	r.ID, r.Vector, r.Metadata, r.Expires = "id-2", nil, nil, time.Time{}
	put.record(r, 1)
	del := newEncoder(opDelete, 2)
	del.str("t")
	del.str("id-1")
	del.str("")
	del.str("id-2")
	return [][]byte{put.frame(), del.frame()}
}

// FuzzDecode feeds arbitrary bytes to the frame decoder and to the payload
// decoder. Neither may panic; the frame decoder never accepts a frame
// whose checksum fails or whose size disagrees with its header; a payload
// wrapped in a valid frame always comes back unchanged.
func FuzzDecode(f *testing.F) {
	for _, fr := range validFrames() {
		f.Add(fr)
		f.Add(fr[:len(fr)-1])
		f.Add(fr[frameHeaderBytes:])
		garbled := bytes.Clone(fr)
		garbled[len(garbled)/2] ^= 1
		f.Add(garbled)
	}
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, size, err := decodeFrame(data)
		switch {
		case err == nil:
			n := binary.LittleEndian.Uint64(data[0:8])
			if size != frameHeaderBytes+int64(n) || int64(len(payload)) != int64(n) {
				t.Fatalf("accepted a frame of size %d with a payload of %d bytes; its header declares %d", size, len(payload), n)
			}
			if frameSum(data[0:8], payload) != binary.LittleEndian.Uint32(data[8:12]) {
				t.Fatalf("accepted a frame whose checksum fails")
			}
			for _, format := range []int{logFormatIDOnly, logFormat} {
				if _, err := decodePayload(string(payload), format); err != nil && !errors.Is(err, errMalformed) {
					t.Fatalf("decoding an accepted payload as format %d: unexpected error %v", format, err)
				}
			}
		case errors.Is(err, errIncomplete), errors.Is(err, errBadFrame):
		default:
			t.Fatalf("unexpected error %v", err)
		}

		// The same bytes as a payload, sealed in a valid frame.
		buf := append(make([]byte, frameHeaderBytes), data...)
		if len(data) == 0 {
			return
		}
		frame := sealFrame(buf)
		got, _, err := decodeFrame(frame)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("a sealed frame did not decode to its payload: %v", err)
		}
		if op, err := decodePayload(string(got), logFormat); err == nil {
			for _, r := range op.puts {
				if r.e == nil || r.e.Extra.size <= 0 {
					t.Fatalf("decoded a record without its encoding size")
				}
			}
		}
	})
}

// TestDecodeRejectsEveryCorruption flips each bit of valid frames in turn:
// the decoder must refuse every one.
func TestDecodeRejectsEveryCorruption(t *testing.T) {
	for _, fr := range validFrames() {
		if _, _, err := decodeFrame(fr); err != nil {
			t.Fatalf("a valid frame was refused: %v", err)
		}
		for bit := range len(fr) * 8 {
			bad := bytes.Clone(fr)
			bad[bit/8] ^= 1 << (bit % 8)
			if _, _, err := decodeFrame(bad); err == nil {
				t.Fatalf("a frame with bit %d flipped was accepted", bit)
			}
		}
	}
}

// TestPayloadRoundTrip checks that the payload decoder reads back what the
// encoder wrote, field by field.
func TestPayloadRoundTrip(t *testing.T) {
	frames := validFrames()
	payload, _, err := decodeFrame(frames[0])
	if err != nil {
		t.Fatal(err)
	}
	op, err := decodePayload(string(payload), logFormat)
	if err != nil {
		t.Fatal(err)
	}
	if op.op != opPut || len(op.puts) != 2 {
		t.Fatalf("decoded op %d with %d records, want a put of 2", op.op, len(op.puts))
	}
	e := op.puts[0].e
	newIndex(logHeader{format: logFormat}).put(e, op.puts[0].who) // gives e its identity
	// The first record validFrames encodes, at version 3.
	want := memory.Record{ID: "id-1", Kind: memory.KindDocument, Identity: memory.Identity{Tenant: "t", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		Label: "l", Key: "k", Content: `{"content":true}`, Metadata: map[string]string{"a": "1", "b": "2"}, Created: time.Unix(1, 2), Expires: time.Unix(3, 4),
		Tokens: 7, Version: 3, Vector: []float32{1, -2, 0.5}}
	if diff := cmp.Diff(want, e.Record()); diff != "" {
		t.Fatalf("round trip changed the record (-want +got):\n%s", diff)
	}
	if r := op.puts[1].e; r.HasExpires || r.Vector != nil || r.Metadata != nil || r.Version != 1 {
		t.Fatalf("round trip of the second record: %+v", r)
	}
	payload, _, err = decodeFrame(frames[1])
	if err != nil {
		t.Fatal(err)
	}
	op, err = decodePayload(string(payload), logFormat)
	if err != nil || op.op != opDelete {
		t.Fatalf("tombstones round trip: op %d, %v; want a delete", op.op, err)
	}
	if diff := cmp.Diff([]idKey{{"t", "id-1"}, {"", "id-2"}}, op.deletes, cmp.AllowUnexported(idKey{})); diff != "" {
		t.Fatalf("tombstones round trip (-want +got):\n%s", diff)
	}
}
