package sqldriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/varint"
)

// A cache's snapshot — of the text cache (textcache.Cache.Encode) in both
// schemas, of SQLite's vector copy (veccache.Cache.Encode) — is stored as
// rows of a table of its own (memory_text_snapshots,
// memory_vector_snapshots), chunks of at most SnapshotChunkBytes numbered
// by seq under a generation, and described by a memory_settings row
// (SettingTextSnapshot, SettingVectorSnapshot): a JSON Snapshot. A
// writer stores its chunks under a new random generation, each chunk in a
// transaction of its own (SQLite's writers wait for one chunk, never for
// the whole), then in one last transaction points the description at its
// generation and deletes every other generation's chunks — unless its
// own chunks are no longer all there, because another writer finished
// in between and deleted them. A reader reads the description and the
// chunks in one transaction and checks their count, length and checksum,
// so it gets a whole snapshot or none.

// The memory_settings rows describing the stored snapshots.
const (
	SettingTextSnapshot   = "text_snapshot"
	SettingVectorSnapshot = "vector_snapshot"
)

// snapshotStore is where one cache's snapshots are stored.
type snapshotStore struct {
	what    string // in errors: "text", "vector"
	table   string
	setting string
	// analyzed: the snapshot's content depends on the lexical analyzer.
	analyzed bool
}

var (
	textSnapshots   = snapshotStore{"text", "memory_text_snapshots", SettingTextSnapshot, true}
	vectorSnapshots = snapshotStore{"vector", "memory_vector_snapshots", SettingVectorSnapshot, false}
)

// SnapshotChunkBytes is the most bytes of a snapshot one row holds.
const SnapshotChunkBytes = 1 << 20

// Snapshot describes a stored snapshot.
type Snapshot struct {
	Generation int64  `json:"generation"`
	Chunks     int    `json:"chunks"`
	Bytes      int    `json:"bytes"`
	CRC32C     uint32 `json:"crc32c"`
	// Analyzer is the lexical.AnalyzerVersion the texts were analysed
	// by; empty for a snapshot of vectors.
	Analyzer string `json:"analyzer,omitempty"`
	// Tag is what the snapshot's content is current at, in the driver's
	// own terms.
	Tag string `json:"tag"`
	// Written is when the snapshot was written, in unix seconds.
	Written int64 `json:"written"`
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Statements of a snapshot store, with ? placeholders; TABLE is the
// store's table.
const (
	insertChunkSQL = `INSERT INTO TABLE (generation, seq, data) VALUES (?, ?, ?)`
	countChunksSQL = `SELECT count(*) FROM TABLE WHERE generation = ?`
	setSettingSQL  = `INSERT INTO memory_settings (name, value) VALUES (?, ?)
	ON CONFLICT (name) DO UPDATE SET value = excluded.value`
	dropOthersSQL     = `DELETE FROM TABLE WHERE generation <> ?`
	dropGenerationSQL = `DELETE FROM TABLE WHERE generation = ?`
	readChunksSQL     = `SELECT data FROM TABLE WHERE generation = ? ORDER BY seq`
	// The chunks by rowid, for a dialect that reads blobs in place
	// (Dialect.Blobs, SQLite); length() reads no blob's content.
	chunkRowsSQL  = `SELECT rowid, length(data) FROM TABLE WHERE generation = ? ORDER BY seq`
	sizeChunksSQL = `SELECT count(*), coalesce(sum(length(data)), 0) FROM TABLE WHERE generation = ?`
)

// storeSQL returns statement, of the statements above, on st's table, with
// the dialect's placeholders.
func (s *SQL) storeSQL(st snapshotStore, statement string) string {
	return s.d.rebind(strings.ReplaceAll(statement, "TABLE", st.table))
}

// writeSnapshot stores data, a snapshot of a cache current at tag, as
// st's snapshot, writing through inTx, which runs fn in a write
// transaction of the driver's and commits it when fn returns nil. A
// write that another completes first gives up, dropping what it wrote,
// and returns nil. Errors are classified.
func (s *SQL) writeSnapshot(ctx context.Context, st snapshotStore, inTx func(ctx context.Context, fn func(q Queryer) error) error, tag string, data []byte) error {
	hdr := Snapshot{
		Generation: rand.Int64(), Bytes: len(data), CRC32C: crc32.Checksum(data, crcTable),
		Tag: tag, Written: time.Now().Unix(),
	}
	if st.analyzed {
		hdr.Analyzer = lexical.AnalyzerVersion()
	}
	what := s.d.Name + ": write the " + st.what + " snapshot"
	for seq := 0; seq == 0 || len(data) > 0; seq++ {
		chunk := data[:min(len(data), SnapshotChunkBytes)]
		data = data[len(chunk):]
		err := inTx(ctx, func(q Queryer) error {
			_, err := q.ExecContext(ctx, s.storeSQL(st, insertChunkSQL), hdr.Generation, seq, chunk)
			return err
		})
		if err != nil {
			return driver.Fail(ctx, s.d.Kind, err, what)
		}
		hdr.Chunks++
	}
	desc, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	err = inTx(ctx, func(q Queryer) error {
		var n int
		if err := q.QueryRowContext(ctx, s.storeSQL(st, countChunksSQL), hdr.Generation).Scan(&n); err != nil {
			return err
		}
		if n != hdr.Chunks {
			// Another writer's snapshot replaced this one while it was
			// written, dropping the chunks written before; the chunks
			// written after would stay until the next snapshot.
			_, err := q.ExecContext(ctx, s.storeSQL(st, dropGenerationSQL), hdr.Generation)
			return err
		}
		if _, err := q.ExecContext(ctx, s.d.rebind(setSettingSQL), st.setting, string(desc)); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, s.storeSQL(st, dropOthersSQL), hdr.Generation)
		return err
	})
	return driver.Fail(ctx, s.d.Kind, err, what)
}

// readSnapshot reads on q, which must read from one snapshot of the
// database (a read transaction), st's snapshot's description, and, when
// the snapshot's content does not depend on the analyzer or was analysed
// as this code analyses, and use accepts its description, decodes its
// data as the chunks arrive (decode), returning what decode made once
// the data has been checked whole against the description: chunk count,
// length and checksum. It returns the zero T when there is no snapshot,
// or none to use. A snapshot whose chunks do not add up to its
// description is an error, and so is one that does not decode. Errors
// come back unclassified: a driver falls back on reading the records.
func readSnapshot[T any](ctx context.Context, s *SQL, q Queryer, st snapshotStore, use func(Snapshot) bool, decode func(*varint.Stream) (T, error)) (T, Snapshot, error) {
	var zero T
	var hdr Snapshot
	var desc string
	err := q.QueryRowContext(ctx, s.readSettingSQL, st.setting).Scan(&desc)
	if errors.Is(err, sql.ErrNoRows) {
		return zero, hdr, nil
	}
	if err != nil {
		return zero, hdr, err
	}
	if err := json.Unmarshal([]byte(desc), &hdr); err != nil {
		return zero, hdr, fmt.Errorf("the %s snapshot's description %q: %w", st.what, desc, err)
	}
	if st.analyzed && hdr.Analyzer != lexical.AnalyzerVersion() || !use(hdr) {
		return zero, hdr, nil
	}
	// The buffer is allocated for the length described, once the chunks
	// are known to add up to it: the description may lie.
	var chunks, bytes int64
	if err := q.QueryRowContext(ctx, s.storeSQL(st, sizeChunksSQL), hdr.Generation).Scan(&chunks, &bytes); err != nil {
		return zero, hdr, err
	}
	if chunks != int64(hdr.Chunks) || bytes != int64(hdr.Bytes) {
		return zero, hdr, fmt.Errorf("the %s snapshot's %d chunks of %d bytes do not match its description %q", st.what, chunks, bytes, desc)
	}
	stream := varint.NewStream(hugepages.Make[byte](hdr.Bytes, hdr.Bytes))
	type decoded struct {
		c   T
		err error
	}
	done := make(chan decoded, 1)
	go func() {
		c, err := decode(stream)
		done <- decoded{c, err}
	}()
	read, err := s.readChunks(ctx, q, st, hdr.Generation, stream)
	stream.End()
	dec := <-done
	if err != nil {
		return zero, hdr, err
	}
	data := stream.Written()
	if read != hdr.Chunks || len(data) != hdr.Bytes || crc32.Checksum(data, crcTable) != hdr.CRC32C {
		return zero, hdr, fmt.Errorf("the %s snapshot's %d chunks of %d bytes do not match its description (%d chunks, %d bytes, checksum %08x)",
			st.what, read, len(data), hdr.Chunks, hdr.Bytes, hdr.CRC32C)
	}
	return dec.c, hdr, dec.err
}

// readChunks writes the chunks of generation to stream, in order, and
// returns how many it read.
func (s *SQL) readChunks(ctx context.Context, q Queryer, st snapshotStore, generation int64, stream *varint.Stream) (int, error) {
	if s.d.Blobs != nil {
		if read := s.d.Blobs(ctx, q); read != nil {
			return s.readChunksInPlace(ctx, q, st, generation, stream, read)
		}
	}
	rows, err := q.QueryContext(ctx, s.storeSQL(st, readChunksSQL), generation)
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
			return n, fmt.Errorf("the %s snapshot holds more than the %d bytes described", st.what, stream.Len())
		}
		n++
	}
	return n, rows.Err()
}

// readChunksInPlace is readChunks through read: each chunk is read by its
// rowid straight into the stream's buffer.
func (s *SQL) readChunksInPlace(ctx context.Context, q Queryer, st snapshotStore, generation int64, stream *varint.Stream, read BlobReader) (int, error) {
	type chunk struct {
		rowid int64
		n     int
	}
	var chunks []chunk
	rows, err := q.QueryContext(ctx, s.storeSQL(st, chunkRowsSQL), generation)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.rowid, &c.n); err != nil {
			rows.Close()
			return 0, err
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, err
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for i, c := range chunks {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		err := stream.Fill(c.n, func(dst []byte) error { return read(st.table, "data", c.rowid, dst) })
		if errors.Is(err, varint.ErrStreamFull) {
			return i, fmt.Errorf("the %s snapshot holds more than the %d bytes described", st.what, stream.Len())
		}
		if err != nil {
			return i, err
		}
	}
	return len(chunks), nil
}
