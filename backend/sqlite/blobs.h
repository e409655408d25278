// The parts of SQLite's public C interface (sqlite3.h, in the public
// domain) that blobs.c uses, declared here for the reason walvfs.h gives:
// the functions are the ones github.com/mattn/go-sqlite3 links into the
// program.

#ifndef AGENTMEM_BLOBS_H
#define AGENTMEM_BLOBS_H

typedef long long int sqlite3_int64;
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_blob sqlite3_blob;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;

#define SQLITE_OK 0
#define SQLITE_UTF8 1
#define SQLITE_DIRECTONLY 0x000080000

int sqlite3_auto_extension(void (*xEntryPoint)(void));
int sqlite3_create_function_v2(sqlite3 *db, const char *zFunctionName, int nArg, int eTextRep, void *pApp,
                               void (*xFunc)(sqlite3_context *, int, sqlite3_value **),
                               void (*xStep)(sqlite3_context *, int, sqlite3_value **),
                               void (*xFinal)(sqlite3_context *), void (*xDestroy)(void *));
sqlite3 *sqlite3_context_db_handle(sqlite3_context *);
void sqlite3_result_int64(sqlite3_context *, sqlite3_int64);
int sqlite3_blob_open(sqlite3 *, const char *zDb, const char *zTable, const char *zColumn, sqlite3_int64 iRow,
                      int flags, sqlite3_blob **ppBlob);
int sqlite3_blob_bytes(sqlite3_blob *);
int sqlite3_blob_read(sqlite3_blob *, void *Z, int N, int iOffset);
int sqlite3_blob_close(sqlite3_blob *);
const char *sqlite3_errmsg(sqlite3 *);

// The functions blobs.c defines for blobs.go.
int agentmem_blobs_register(void);
int agentmem_blob_read(sqlite3_int64 conn, const char *table, const char *column, sqlite3_int64 rowid, void *dst,
                       int n, int *have);
const char *agentmem_blob_errmsg(sqlite3_int64 conn);

#endif
