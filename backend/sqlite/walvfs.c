//go:build cgo

// A VFS that wraps SQLite's default one and gathers the writes of a
// transaction's WAL frames into one system call. See walvfs.go for why,
// and for the argument that no reader, no other process and no crash can
// tell the difference.

#include <stdlib.h>
#include <string.h>

#include "walvfs.h"

#define WALVFS_NAME "agentmem-wal"
#define FRAME_HEADER 24          // bytes of a WAL frame header
#define WAL_HEADER 32            // bytes of a WAL file's header
#define WAL_WRITE_LOCK 0         // the shared-memory lock a WAL writer holds
// BUFFER_BYTES is the most a WAL file holds back, written in one call: the
// unix VFS writes less than 128 KiB a call (seekAndWriteFd asserts it and
// masks the length with 0x1ffff), and SQLite's own writes are at most a
// 64 KiB page.
#define BUFFER_BYTES (120 << 10)

typedef struct amFile amFile;

// amFile is an open file: the wrapped file lives right after it.
struct amFile {
  sqlite3_file base; // pMethods: one of amMethods
  sqlite3_file *real;

  // A main database file: the name SQLite opened it by (the key its WAL
  // finds it by) and the WAL its connection has open, if any.
  const char *name;
  amFile *wal;
  amFile *next; // in mainFiles

  // A WAL file: its connection's main database file (NULL: every write
  // goes straight through), and the writes held back, buf[0:n] at offset
  // start.
  int isWAL;
  amFile *db;
  unsigned char *buf;
  int n;
  sqlite3_int64 start;
  // The last write ended at end and was the header of a frame that does
  // not commit: the write at end is that frame's page.
  int afterHeader;
  sqlite3_int64 end;
};

static sqlite3_vfs *baseVFS;
static sqlite3_vfs amVFS;
static sqlite3_mutex *mainFilesMu; // SQLITE_MUTEX_STATIC_VFS3, guards mainFiles and the links
static amFile *mainFiles;
static long long walWrites; // writes that reached a WAL file, for tests
static long long walHeaderWrites; // those of them that wrote the WAL's header alone
static long long walDrops;  // times held-back frames were dropped, for tests

#define REAL(f) (((amFile *)(f))->real)
#define METHODS(f) (REAL(f)->pMethods)

// walWrite passes a write to the wrapped WAL file.
static int walWrite(amFile *p, const void *z, int amt, sqlite3_int64 off) {
  __atomic_fetch_add(&walWrites, 1, __ATOMIC_RELAXED);
  if (off == 0 && amt == WAL_HEADER) {
    __atomic_fetch_add(&walHeaderWrites, 1, __ATOMIC_RELAXED);
  }
  return p->real->pMethods->xWrite(p->real, z, amt, off);
}

// flush writes what p holds back.
static int flush(amFile *p) {
  int rc = SQLITE_OK;
  if (p->n > 0) {
    rc = walWrite(p, p->buf, p->n, p->start);
    p->n = 0;
  }
  return rc;
}

// discard drops what p holds back: frames of a transaction that ended
// without committing them.
static void discard(amFile *p) {
  p->n = 0;
  p->afterHeader = 0;
}

// amWrite holds back the header of a frame that commits nothing and the
// page written right after it; any other write goes to the file at once,
// together with what was held back before it when it continues it. The
// header of a commit frame is such a write, so a transaction's frames are
// in the file before its commit frame's page is written, and long before
// SQLite publishes the commit in the WAL index.
static int amWrite(sqlite3_file *f, const void *z, int amt, sqlite3_int64 off) {
  amFile *p = (amFile *)f;
  const unsigned char *b = z;
  int header, hold, rc;
  if (!p->isWAL || p->db == 0) {
    return METHODS(f)->xWrite(REAL(f), z, amt, off);
  }
  header = amt == FRAME_HEADER && (b[4] | b[5] | b[6] | b[7]) == 0;
  hold = header || (p->afterHeader && off == p->end);
  p->afterHeader = header;
  p->end = off + amt;
  if (p->n > 0 && (off != p->start + p->n || p->n + amt > BUFFER_BYTES)) {
    if ((rc = flush(p)) != SQLITE_OK) {
      p->afterHeader = 0;
      return rc;
    }
  }
  if (amt > BUFFER_BYTES || (p->n == 0 && !hold)) {
    return walWrite(p, z, amt, off);
  }
  if (p->buf == 0 && (p->buf = malloc(BUFFER_BYTES)) == 0) {
    return walWrite(p, z, amt, off);
  }
  if (p->n == 0) {
    p->start = off;
  }
  memcpy(p->buf + p->n, z, amt);
  p->n += amt;
  return hold ? SQLITE_OK : flush(p);
}

// Every other method of a WAL file first writes what it holds back, so the
// file is as SQLite left it.
#define FLUSHED(f)                                          \
  do {                                                      \
    int rc_;                                                \
    if (((amFile *)(f))->n > 0 && (rc_ = flush((amFile *)(f))) != SQLITE_OK) \
      return rc_;                                           \
  } while (0)

static int amClose(sqlite3_file *f) {
  amFile *p = (amFile *)f;
  sqlite3_mutex_enter(mainFilesMu);
  if (p->isWAL) {
    if (p->db) p->db->wal = 0;
  } else if (p->name) {
    amFile **q;
    for (q = &mainFiles; *q; q = &(*q)->next) {
      if (*q == p) {
        *q = p->next;
        break;
      }
    }
    if (p->wal) p->wal->db = 0;
  }
  sqlite3_mutex_leave(mainFilesMu);
  // Anything still held back belongs to a transaction that ended without
  // committing it (see amShmLock); it is not written.
  discard(p);
  free(p->buf);
  p->buf = 0;
  return METHODS(f)->xClose(REAL(f));
}

// FORWARD defines method name, which writes what the file holds back and
// then calls the wrapped file's method xMethod.
#define FORWARD(name, xMethod, params, args)         \
  static int name params {                           \
    FLUSHED(f);                                      \
    return METHODS(f)->xMethod args;                 \
  }
FORWARD(amRead, xRead, (sqlite3_file *f, void *z, int amt, sqlite3_int64 off), (REAL(f), z, amt, off))
FORWARD(amTruncate, xTruncate, (sqlite3_file *f, sqlite3_int64 size), (REAL(f), size))
FORWARD(amSync, xSync, (sqlite3_file *f, int flags), (REAL(f), flags))
FORWARD(amFileSize, xFileSize, (sqlite3_file *f, sqlite3_int64 *size), (REAL(f), size))
FORWARD(amLock, xLock, (sqlite3_file *f, int lock), (REAL(f), lock))
FORWARD(amUnlock, xUnlock, (sqlite3_file *f, int lock), (REAL(f), lock))
FORWARD(amCheckReservedLock, xCheckReservedLock, (sqlite3_file *f, int *out), (REAL(f), out))
FORWARD(amFileControl, xFileControl, (sqlite3_file *f, int op, void *arg), (REAL(f), op, arg))
FORWARD(amShmMap, xShmMap, (sqlite3_file *f, int pg, int size, int extend, void volatile **pp), (REAL(f), pg, size, extend, pp))
FORWARD(amShmUnmap, xShmUnmap, (sqlite3_file *f, int deleteFlag), (REAL(f), deleteFlag))
FORWARD(amFetch, xFetch, (sqlite3_file *f, sqlite3_int64 off, int amt, void **pp), (REAL(f), off, amt, pp))
FORWARD(amUnfetch, xUnfetch, (sqlite3_file *f, sqlite3_int64 off, void *pg), (REAL(f), off, pg))

// Sizes and capabilities read no data.
static int amSectorSize(sqlite3_file *f) { return METHODS(f)->xSectorSize(REAL(f)); }
static int amDeviceCharacteristics(sqlite3_file *f) {
  return METHODS(f)->xDeviceCharacteristics(REAL(f));
}

// amShmLock is called on the main database file. When its connection
// gives up the WAL's write lock, the transaction is over: its commit, if
// any, is in the file, and whatever its WAL still holds back is frames it
// did not commit (a transaction that spilled pages and rolled back), which
// must not be written later, over frames another writer may write next.
static int amShmLock(sqlite3_file *f, int ofst, int n, int flags) {
  amFile *p = (amFile *)f;
  if (p->wal && (flags & SQLITE_SHM_UNLOCK) && ofst <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < ofst + n) {
    if (p->wal->n > 0) __atomic_fetch_add(&walDrops, 1, __ATOMIC_RELAXED);
    discard(p->wal);
  }
  return METHODS(f)->xShmLock(REAL(f), ofst, n, flags);
}
static void amShmBarrier(sqlite3_file *f) { METHODS(f)->xShmBarrier(REAL(f)); }

// amMethods[v-1] is the method table of version v, the version of the
// wrapped file's.
#define AM_METHODS(v)                                                      \
  {                                                                        \
    v, amClose, amRead, amWrite, amTruncate, amSync, amFileSize, amLock,  \
        amUnlock, amCheckReservedLock, amFileControl, amSectorSize,        \
        amDeviceCharacteristics, amShmMap, amShmLock, amShmBarrier,        \
        amShmUnmap, amFetch, amUnfetch                                     \
  }
static const sqlite3_io_methods amMethods[3] = {AM_METHODS(1), AM_METHODS(2), AM_METHODS(3)};

#define ROUND8(x) (((x) + 7) & ~7)

static int amOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
  amFile *p = (amFile *)f;
  int rc, v;
  memset(p, 0, sizeof(*p));
  p->real = (sqlite3_file *)((char *)p + ROUND8(sizeof(amFile)));
  rc = baseVFS->xOpen(baseVFS, name, p->real, flags, outFlags);
  if (p->real->pMethods == 0) {
    p->base.pMethods = 0;
    return rc;
  }
  v = p->real->pMethods->iVersion;
  if (v < 1) v = 1;
  if (v > 3) v = 3;
  p->base.pMethods = &amMethods[v - 1];
  if (rc != SQLITE_OK || name == 0) return rc;
  sqlite3_mutex_enter(mainFilesMu);
  if (flags & SQLITE_OPEN_MAIN_DB) {
    p->name = name;
    p->next = mainFiles;
    mainFiles = p;
  } else if (flags & SQLITE_OPEN_WAL) {
    // SQLite names a WAL after its database within one allocation, so
    // the database's name, as sqlite3_filename_database finds it, is the
    // very pointer the connection opened its main file with.
    const char *db = sqlite3_filename_database(name);
    amFile *m;
    p->isWAL = 1;
    for (m = mainFiles; m; m = m->next) {
      // Holding writes back needs amShmLock, in a version-2 table.
      if (m->name == db && m->wal == 0 && m->base.pMethods->iVersion >= 2) {
        m->wal = p;
        p->db = m;
        break;
      }
    }
  }
  sqlite3_mutex_leave(mainFilesMu);
  return rc;
}

// The VFS methods are the base VFS's.
static int amDelete(sqlite3_vfs *v, const char *name, int syncDir) {
  return baseVFS->xDelete(baseVFS, name, syncDir);
}
static int amAccess(sqlite3_vfs *v, const char *name, int flags, int *out) {
  return baseVFS->xAccess(baseVFS, name, flags, out);
}
static int amFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) {
  return baseVFS->xFullPathname(baseVFS, name, n, out);
}
static void *amDlOpen(sqlite3_vfs *v, const char *name) { return baseVFS->xDlOpen(baseVFS, name); }
static void amDlError(sqlite3_vfs *v, int n, char *msg) { baseVFS->xDlError(baseVFS, n, msg); }
static void (*amDlSym(sqlite3_vfs *v, void *h, const char *sym))(void) {
  return baseVFS->xDlSym(baseVFS, h, sym);
}
static void amDlClose(sqlite3_vfs *v, void *h) { baseVFS->xDlClose(baseVFS, h); }
static int amRandomness(sqlite3_vfs *v, int n, char *out) {
  return baseVFS->xRandomness(baseVFS, n, out);
}
static int amSleep(sqlite3_vfs *v, int us) { return baseVFS->xSleep(baseVFS, us); }
static int amCurrentTime(sqlite3_vfs *v, double *t) { return baseVFS->xCurrentTime(baseVFS, t); }
static int amGetLastError(sqlite3_vfs *v, int n, char *out) {
  return baseVFS->xGetLastError(baseVFS, n, out);
}
static int amCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) {
  return baseVFS->xCurrentTimeInt64(baseVFS, t);
}
static int amSetSystemCall(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr fn) {
  return baseVFS->xSetSystemCall(baseVFS, name, fn);
}
static sqlite3_syscall_ptr amGetSystemCall(sqlite3_vfs *v, const char *name) {
  return baseVFS->xGetSystemCall(baseVFS, name);
}
static const char *amNextSystemCall(sqlite3_vfs *v, const char *name) {
  return baseVFS->xNextSystemCall(baseVFS, name);
}

// agentmem_walvfs_register registers the VFS, not as the default, over
// the default VFS. It must be called once, before the VFS is used; it
// returns SQLITE_ERROR when the default VFS is older than version 3.
int agentmem_walvfs_register(void) {
  baseVFS = sqlite3_vfs_find(0);
  if (baseVFS == 0 || baseVFS->iVersion < 3) return SQLITE_ERROR;
  mainFilesMu = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_VFS3);
  amVFS.iVersion = 3;
  amVFS.szOsFile = ROUND8(sizeof(amFile)) + baseVFS->szOsFile;
  amVFS.mxPathname = baseVFS->mxPathname;
  amVFS.zName = WALVFS_NAME;
  amVFS.xOpen = amOpen;
  amVFS.xDelete = amDelete;
  amVFS.xAccess = amAccess;
  amVFS.xFullPathname = amFullPathname;
  amVFS.xDlOpen = amDlOpen;
  amVFS.xDlError = amDlError;
  amVFS.xDlSym = amDlSym;
  amVFS.xDlClose = amDlClose;
  amVFS.xRandomness = amRandomness;
  amVFS.xSleep = amSleep;
  amVFS.xCurrentTime = amCurrentTime;
  amVFS.xGetLastError = amGetLastError;
  amVFS.xCurrentTimeInt64 = amCurrentTimeInt64;
  amVFS.xSetSystemCall = amSetSystemCall;
  amVFS.xGetSystemCall = amGetSystemCall;
  amVFS.xNextSystemCall = amNextSystemCall;
  return sqlite3_vfs_register(&amVFS, 0);
}

// agentmem_walvfs_writes returns how many writes have reached WAL files
// through the VFS.
long long agentmem_walvfs_writes(void) { return __atomic_load_n(&walWrites, __ATOMIC_RELAXED); }

// agentmem_walvfs_header_writes returns how many of those writes wrote a
// WAL file's header alone, as SQLite does when the log restarts after a
// checkpoint, for tests.
long long agentmem_walvfs_header_writes(void) { return __atomic_load_n(&walHeaderWrites, __ATOMIC_RELAXED); }

// agentmem_walvfs_drops returns how many times a WAL file dropped frames
// it held back when its connection gave up the write lock.
long long agentmem_walvfs_drops(void) { return __atomic_load_n(&walDrops, __ATOMIC_RELAXED); }
