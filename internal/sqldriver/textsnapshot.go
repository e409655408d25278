package sqldriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"time"

	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/lexical"
)

// A text cache's snapshot (textcache.Cache.Encode) is stored in both
// schemas as rows of memory_text_snapshots, chunks of at most
// SnapshotChunkBytes numbered by seq under a generation, and described by
// the memory_settings row SettingTextSnapshot: a JSON TextSnapshot. A
// writer stores its chunks under a new random generation, each chunk in a
// transaction of its own (SQLite's writers wait for one chunk, never for
// the whole), then in one last transaction points the description at its
// generation and deletes every other generation's chunks — unless its
// own chunks are no longer all there, because another writer finished
// in between and deleted them. A reader reads the description and the
// chunks in one transaction and checks their count, length and checksum,
// so it gets a whole snapshot or none.

// SettingTextSnapshot names the memory_settings row describing the stored
// text snapshot.
const SettingTextSnapshot = "text_snapshot"

// SnapshotChunkBytes is the most bytes of a snapshot one row holds.
const SnapshotChunkBytes = 1 << 20

// TextSnapshot describes a stored text snapshot.
type TextSnapshot struct {
	Generation int64  `json:"generation"`
	Chunks     int    `json:"chunks"`
	Bytes      int    `json:"bytes"`
	CRC32C     uint32 `json:"crc32c"`
	// Analyzer is the lexical.AnalyzerVersion the texts were analysed by.
	Analyzer string `json:"analyzer"`
	// Tag is what the snapshot's content is current at, in the driver's
	// own terms.
	Tag string `json:"tag"`
	// Written is when the snapshot was written, in unix seconds.
	Written int64 `json:"written"`
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Statements of the snapshot store, with ? placeholders.
const (
	insertChunkSQL = `INSERT INTO memory_text_snapshots (generation, seq, data) VALUES (?, ?, ?)`
	countChunksSQL = `SELECT count(*) FROM memory_text_snapshots WHERE generation = ?`
	setSettingSQL  = `INSERT INTO memory_settings (name, value) VALUES (?, ?)
	ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	dropOthersSQL = `DELETE FROM memory_text_snapshots WHERE generation <> ?`
	readChunksSQL = `SELECT data FROM memory_text_snapshots WHERE generation = ? ORDER BY seq`
)

// errSnapshotGone is why a snapshot write gave up: another writer
// deleted its chunks meanwhile.
var errSnapshotGone = errors.New("another snapshot was stored meanwhile")

// WriteTextSnapshot stores data, a snapshot of a text cache current at
// tag, as the store's text snapshot, writing through inTx, which runs fn
// in a write transaction of the driver's and commits it when fn returns
// nil. A write that another completes first gives up, returning nil.
// Errors are classified.
func (s *SQL) WriteTextSnapshot(ctx context.Context, inTx func(ctx context.Context, fn func(q Queryer) error) error, tag string, data []byte) error {
	hdr := TextSnapshot{
		Generation: rand.Int64(), Bytes: len(data), CRC32C: crc32.Checksum(data, crcTable),
		Analyzer: lexical.AnalyzerVersion(), Tag: tag, Written: time.Now().Unix(),
	}
	what := s.d.Name + ": write the text snapshot"
	for seq := 0; seq == 0 || len(data) > 0; seq++ {
		chunk := data[:min(len(data), SnapshotChunkBytes)]
		data = data[len(chunk):]
		err := inTx(ctx, func(q Queryer) error {
			_, err := q.ExecContext(ctx, s.d.rebind(insertChunkSQL), hdr.Generation, seq, chunk)
			return err
		})
		if err != nil {
			return Fail(ctx, s.d.Kind, err, what)
		}
		hdr.Chunks++
	}
	desc, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	err = inTx(ctx, func(q Queryer) error {
		var n int
		if err := q.QueryRowContext(ctx, s.d.rebind(countChunksSQL), hdr.Generation).Scan(&n); err != nil {
			return err
		}
		if n != hdr.Chunks {
			return errSnapshotGone
		}
		if _, err := q.ExecContext(ctx, s.d.rebind(setSettingSQL), SettingTextSnapshot, string(desc)); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, s.d.rebind(dropOthersSQL), hdr.Generation)
		return err
	})
	if errors.Is(err, errSnapshotGone) {
		return nil
	}
	return Fail(ctx, s.d.Kind, err, what)
}

// ReadTextSnapshot reads on q, which must read from one snapshot of the
// database (a read transaction), the stored text snapshot: its
// description, and, when the snapshot was analysed as this code analyses
// and use accepts its description, its data, checked whole. It returns
// nil data when there is no snapshot, or none to use. A snapshot whose
// chunks do not add up to its description is an error. Errors come back
// unclassified: a driver falls back on reading the records.
func (s *SQL) ReadTextSnapshot(ctx context.Context, q Queryer, use func(TextSnapshot) bool) (TextSnapshot, []byte, error) {
	var hdr TextSnapshot
	var desc string
	err := q.QueryRowContext(ctx, s.readSettingSQL, SettingTextSnapshot).Scan(&desc)
	if errors.Is(err, sql.ErrNoRows) {
		return hdr, nil, nil
	}
	if err != nil {
		return hdr, nil, err
	}
	if err := json.Unmarshal([]byte(desc), &hdr); err != nil {
		return hdr, nil, fmt.Errorf("the text snapshot's description %q: %w", desc, err)
	}
	if hdr.Analyzer != lexical.AnalyzerVersion() || !use(hdr) {
		return hdr, nil, nil
	}
	if hdr.Bytes < 0 || hdr.Chunks < 1 || hdr.Chunks > hdr.Bytes/SnapshotChunkBytes+1 {
		return hdr, nil, fmt.Errorf("the text snapshot's description %q is impossible", desc)
	}
	rows, err := q.QueryContext(ctx, s.d.rebind(readChunksSQL), hdr.Generation)
	if err != nil {
		return hdr, nil, err
	}
	defer rows.Close()
	data := hugepages.Make[byte](0, min(hdr.Bytes, 64<<20)) // the description may lie
	chunks := 0
	for rows.Next() {
		var chunk sql.RawBytes
		if err := rows.Scan(&chunk); err != nil {
			return hdr, nil, err
		}
		if len(data)+len(chunk) > hdr.Bytes {
			return hdr, nil, fmt.Errorf("the text snapshot holds more than the %d bytes described", hdr.Bytes)
		}
		data = append(data, chunk...)
		chunks++
	}
	if err := rows.Err(); err != nil {
		return hdr, nil, err
	}
	if chunks != hdr.Chunks || len(data) != hdr.Bytes || crc32.Checksum(data, crcTable) != hdr.CRC32C {
		return hdr, nil, fmt.Errorf("the text snapshot's %d chunks of %d bytes do not match its description (%d chunks, %d bytes, checksum %08x)",
			chunks, len(data), hdr.Chunks, hdr.Bytes, hdr.CRC32C)
	}
	return hdr, data, nil
}
