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
	"github.com/agentmem/memory/internal/textcache"
	"github.com/agentmem/memory/internal/varint"
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
	sizeChunksSQL = `SELECT count(*), coalesce(sum(length(data)), 0) FROM memory_text_snapshots WHERE generation = ?`
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

// readTextSnapshot reads on q, which must read from one snapshot of the
// database (a read transaction), the stored text snapshot's description,
// and, when the snapshot was analysed as this code analyses and use
// accepts its description, decodes its data as the chunks arrive
// (textcache.DecodeStream), returning the cache once the data has been
// checked whole against the description: chunk count, length and
// checksum. It returns a nil cache when there is no snapshot, or none to
// use. A snapshot whose chunks do not add up to its description is an
// error, and so is one that does not decode. Errors come back
// unclassified: a driver falls back on reading the records.
func (s *SQL) readTextSnapshot(ctx context.Context, q Queryer, use func(TextSnapshot) bool) (*textcache.Cache, TextSnapshot, error) {
	var hdr TextSnapshot
	var desc string
	err := q.QueryRowContext(ctx, s.readSettingSQL, SettingTextSnapshot).Scan(&desc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hdr, nil
	}
	if err != nil {
		return nil, hdr, err
	}
	if err := json.Unmarshal([]byte(desc), &hdr); err != nil {
		return nil, hdr, fmt.Errorf("the text snapshot's description %q: %w", desc, err)
	}
	if hdr.Analyzer != lexical.AnalyzerVersion() || !use(hdr) {
		return nil, hdr, nil
	}
	// The buffer is allocated for the length described, once the chunks
	// are known to add up to it: the description may lie.
	var chunks, bytes int64
	if err := q.QueryRowContext(ctx, s.d.rebind(sizeChunksSQL), hdr.Generation).Scan(&chunks, &bytes); err != nil {
		return nil, hdr, err
	}
	if chunks != int64(hdr.Chunks) || bytes != int64(hdr.Bytes) {
		return nil, hdr, fmt.Errorf("the text snapshot's %d chunks of %d bytes do not match its description %q", chunks, bytes, desc)
	}
	stream := varint.NewStream(hugepages.Make[byte](hdr.Bytes, hdr.Bytes))
	type decoded struct {
		c   *textcache.Cache
		err error
	}
	done := make(chan decoded, 1)
	go func() {
		c, err := textcache.DecodeStream(stream)
		done <- decoded{c, err}
	}()
	read, err := s.readChunks(ctx, q, hdr.Generation, stream)
	stream.End()
	dec := <-done
	if err != nil {
		return nil, hdr, err
	}
	data := stream.Written()
	if read != hdr.Chunks || len(data) != hdr.Bytes || crc32.Checksum(data, crcTable) != hdr.CRC32C {
		return nil, hdr, fmt.Errorf("the text snapshot's %d chunks of %d bytes do not match its description (%d chunks, %d bytes, checksum %08x)",
			read, len(data), hdr.Chunks, hdr.Bytes, hdr.CRC32C)
	}
	return dec.c, hdr, dec.err
}

// readChunks writes the chunks of generation to stream, in order, and
// returns how many it read.
func (s *SQL) readChunks(ctx context.Context, q Queryer, generation int64, stream *varint.Stream) (int, error) {
	rows, err := q.QueryContext(ctx, s.d.rebind(readChunksSQL), generation)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var chunk sql.RawBytes
		if err := rows.Scan(&chunk); err != nil {
			return n, err
		}
		if _, err := stream.Write(chunk); err != nil {
			return n, fmt.Errorf("the text snapshot holds more than the %d bytes described", stream.Len())
		}
		n++
	}
	return n, rows.Err()
}
