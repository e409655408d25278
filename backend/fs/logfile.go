package fs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/osfile"
)

// Names in the store's directory.
const (
	// logName is the log of frames.
	logName = "records.log"
	// lockName is the file every process locks to write.
	lockName = "lock"
	// tempPrefix starts the name of a log being written, before it is
	// renamed to logName; one left by a crash is removed at the next Open.
	tempPrefix = "records.log.tmp-"
)

// The log file header: magic, format version, generation, the store's
// vector dimension when the file was written, and a CRC-32C of the rest.
//
// Format 2 names each tombstone by tenant and id, as record ids are unique
// per tenant; format 1 named the id alone, when ids were unique per store.
// A format-1 log is read (its ids are unique, so a tombstone's id names one
// record) and rewritten in format 2 by the first writer, before it writes.
const (
	logMagic        = "agmemlog"
	logFormat       = 2
	logFormatIDOnly = 1
	logHeaderBytes  = 8 + 4 + 8 + 4 + 4
)

// logHeader is what a log file's header says.
type logHeader struct {
	// generation counts the files the store has had: 1 for the first, one
	// more for each compaction.
	generation uint64
	// dims is the store's vector dimension when the file was written, so
	// that it outlives the records that set it.
	dims int
	// format is the file's format version: logFormat, or logFormatIDOnly
	// for a file an earlier driver wrote.
	format int
}

func encodeHeader(h logHeader) []byte {
	b := make([]byte, 0, logHeaderBytes)
	b = append(b, logMagic...)
	b = binary.LittleEndian.AppendUint32(b, logFormat)
	b = binary.LittleEndian.AppendUint64(b, h.generation)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.dims))
	return binary.LittleEndian.AppendUint32(b, frameSum(b, nil))
}

func decodeHeader(b []byte) (logHeader, error) {
	if len(b) < logHeaderBytes || string(b[:8]) != logMagic {
		return logHeader{}, memory.Errorf(memory.ErrInvalidArgument, "%s is not a memory log (bad magic)", logName)
	}
	if frameSum(b[:24], nil) != binary.LittleEndian.Uint32(b[24:28]) {
		return logHeader{}, memory.Errorf(memory.ErrInvalidArgument, "%s has a damaged header", logName)
	}
	v := binary.LittleEndian.Uint32(b[8:12])
	if v != logFormat && v != logFormatIDOnly {
		return logHeader{}, memory.Errorf(memory.ErrUnimplemented, "%s has format %d; this driver reads formats %d and %d", logName, v, logFormatIDOnly, logFormat)
	}
	h := logHeader{generation: binary.LittleEndian.Uint64(b[12:20]), dims: int(binary.LittleEndian.Uint32(b[20:24])), format: int(v)}
	if h.dims > memory.MaxVectorDims {
		return logHeader{}, memory.Errorf(memory.ErrInvalidArgument, "%s declares %d vector dimensions", logName, h.dims)
	}
	return h, nil
}

// readBuffer is the most a catch-up reads ahead.
const readBuffer = 1 << 20

// tail says what follows the last complete, valid frame of a log.
type tail int

const (
	// tailClean: nothing.
	tailClean tail = iota
	// tailTorn: the start of a frame that never completed (a write cut
	// short by a crash, or one still in progress elsewhere), or a header
	// with an impossible length, or a last frame whose checksum fails.
	// A writer truncates it.
	tailTorn
	// tailCorrupt: a complete frame whose checksum fails, followed by
	// more bytes. Truncating would drop whatever follows, so it is an
	// error.
	tailCorrupt
)

// readFrames applies to x the frames of f from offset off up to size and
// returns the offset after the last one applied and what follows it. A
// frame that passes its checksum but does not decode is
// memory.ErrInvalidArgument, with nothing of it applied.
func readFrames(f *os.File, off, size int64, x *index) (int64, tail, error) {
	if off >= size {
		return off, tailClean, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), int(min(size-off, readBuffer)))
	var hdr [frameHeaderBytes]byte
	for off < size {
		if size-off < frameHeaderBytes {
			return off, tailTorn, nil
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			t, err := shrunk(err)
			return off, t, err
		}
		n, err := frameLength(hdr[:])
		if err != nil || n > size-off-frameHeaderBytes {
			return off, tailTorn, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			t, err := shrunk(err)
			return off, t, err
		}
		end := off + frameHeaderBytes + n
		if checkFrame(hdr[:], payload) != nil {
			if end == size {
				return off, tailTorn, nil
			}
			return off, tailCorrupt, nil
		}
		op, err := decodePayload(string(payload), x.format)
		if err != nil {
			return off, tailClean, memory.Wrap(memory.ErrInvalidArgument, err, logName+" frame at offset "+itoa(off))
		}
		x.apply(op)
		off = end
	}
	return off, tailClean, nil
}

// shrunk classifies a failed read of the log. Running out of bytes means
// the log shrank since it was measured — a writer cut off the torn tail
// being read — which is a torn tail too.
func shrunk(err error) (tail, error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return tailTorn, nil
	}
	return tailClean, classify(err, "reading "+logName)
}

// writeLog writes a complete log file — header, then the frames body
// writes — under a temporary name and puts it in place as logName with
// osfile.Replace, so the file appears whole or not at all.
func writeLog(dir string, h logHeader, body func(w io.Writer) error) error {
	err := osfile.Replace(filepath.Join(dir, logName), dir, tempPrefix, 0o600, func(w io.Writer) error {
		if _, err := w.Write(encodeHeader(h)); err != nil {
			return err
		}
		if body == nil {
			return nil
		}
		return body(w)
	})
	return classify(err, "writing a new "+logName)
}

// removeTemps removes logs left half-written by a crash during creation
// or compaction. The caller holds the write lock, so none is in progress.
func removeTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return classify(err, "listing the directory")
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return classify(err, "removing a leftover temporary log")
		}
	}
	return nil
}
