// What walvfs.c defines for walvfs.go.

#ifndef AGENTMEM_WALVFS_H
#define AGENTMEM_WALVFS_H

#include "sqliteapi.h"

int agentmem_walvfs_register(void);
long long agentmem_walvfs_writes(void);
long long agentmem_walvfs_header_writes(void);
long long agentmem_walvfs_drops(void);

#endif
