//go:build cgo

// Reading a blob in place: see blobs.go.

#include <stdint.h>

#include "blobs.h"

// connectionFunc is SQL's agentmem_connection(): the connection it runs
// on, as an integer.
static void connectionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_int64(ctx, (sqlite3_int64)(intptr_t)sqlite3_context_db_handle(ctx));
}

// connectionInit defines agentmem_connection() on a new connection. It is
// an automatic extension: SQLite calls it as each connection opens. The
// function is direct-only, so no trigger or view a file holds can call it.
static int connectionInit(sqlite3 *db, char **errMsg, const void *api) {
  (void)errMsg;
  (void)api;
  return sqlite3_create_function_v2(db, "agentmem_connection", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, 0, connectionFunc,
                                    0, 0, 0);
}

int agentmem_blobs_register(void) { return sqlite3_auto_extension((void (*)(void))connectionInit); }

// agentmem_blob_read reads the blob in column of the row rowid of table,
// in the main database of the connection conn, into dst when it is n
// bytes long. It returns an SQLite result code, and the blob's length in
// *have (-1 when it could not be opened); a blob of another length is
// SQLITE_OK with nothing read, for the caller to tell.
int agentmem_blob_read(sqlite3_int64 conn, const char *table, const char *column, sqlite3_int64 rowid, void *dst,
                       int n, int *have) {
  sqlite3_blob *blob = 0;
  int rc = sqlite3_blob_open((sqlite3 *)(intptr_t)conn, "main", table, column, rowid, 0, &blob);
  *have = -1;
  if (rc != SQLITE_OK) {
    return rc;
  }
  *have = sqlite3_blob_bytes(blob);
  if (*have == n && n > 0) {
    rc = sqlite3_blob_read(blob, dst, n, 0);
  }
  int closed = sqlite3_blob_close(blob);
  return rc != SQLITE_OK ? rc : closed;
}

const char *agentmem_blob_errmsg(sqlite3_int64 conn) { return sqlite3_errmsg((sqlite3 *)(intptr_t)conn); }
