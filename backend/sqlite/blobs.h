// What blobs.c defines for blobs.go.

#ifndef AGENTMEM_BLOBS_H
#define AGENTMEM_BLOBS_H

#include "sqliteapi.h"

int agentmem_blobs_register(void);
int agentmem_blob_read(sqlite3_int64 conn, const char *table, const char *column, sqlite3_int64 rowid, void *dst,
                       int n, int *have);
const char *agentmem_blob_errmsg(sqlite3_int64 conn);

#endif
