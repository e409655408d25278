package fs

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// A frame is one committed write: an 8-byte little-endian payload length,
// a 4-byte CRC-32C of the length bytes and the payload together, then the
// payload. A frame is appended whole and synced before its write is
// acknowledged, so only the last frame of a log can be incomplete.
const (
	frameHeaderBytes = 12
	// maxFramePayload bounds the length a frame header may declare, so a
	// damaged header never makes a reader allocate absurd amounts. The
	// largest valid batch (memory.MaxBatch records at every limit) stays
	// well below it.
	maxFramePayload = 1 << 40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Frame decoding outcomes other than success.
var (
	// errIncomplete: the bytes end before the frame does. At the end of a
	// log it is a torn write (or one still in progress in another process).
	errIncomplete = errors.New("incomplete frame")
	// errBadFrame: the frame's length is impossible or its checksum fails.
	errBadFrame = errors.New("frame checksum or length is invalid")
)

// frameSum is the checksum of a frame with the given header length bytes
// and payload.
func frameSum(lenBytes, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(lenBytes, castagnoli), castagnoli, payload)
}

// sealFrame fills the header of buf, whose first frameHeaderBytes bytes
// were reserved for it and whose rest is the payload, and returns buf.
func sealFrame(buf []byte) []byte {
	payload := buf[frameHeaderBytes:]
	binary.LittleEndian.PutUint64(buf[0:8], uint64(len(payload)))
	binary.LittleEndian.PutUint32(buf[8:12], frameSum(buf[0:8], payload))
	return buf
}

// frameLength returns the payload length a header declares, or errBadFrame
// when no frame can have it.
func frameLength(hdr []byte) (int64, error) {
	n := binary.LittleEndian.Uint64(hdr[0:8])
	if n == 0 || n > maxFramePayload {
		return 0, errBadFrame
	}
	return int64(n), nil
}

// checkFrame reports whether payload matches the checksum in hdr.
func checkFrame(hdr, payload []byte) error {
	if frameSum(hdr[0:8], payload) != binary.LittleEndian.Uint32(hdr[8:12]) {
		return errBadFrame
	}
	return nil
}

// decodeFrame reads the frame at the start of buf and returns its payload
// (a sub-slice of buf) and the frame's whole size. It fails with
// errIncomplete when buf ends before the frame does and with errBadFrame
// when the length is impossible or the checksum fails; it never returns a
// payload whose checksum failed.
func decodeFrame(buf []byte) (payload []byte, size int64, err error) {
	if len(buf) < frameHeaderBytes {
		return nil, 0, errIncomplete
	}
	n, err := frameLength(buf)
	if err != nil {
		return nil, 0, err
	}
	if n > int64(len(buf)-frameHeaderBytes) {
		return nil, 0, errIncomplete
	}
	payload = buf[frameHeaderBytes : frameHeaderBytes+n]
	if err := checkFrame(buf, payload); err != nil {
		return nil, 0, err
	}
	return payload, frameHeaderBytes + n, nil
}
