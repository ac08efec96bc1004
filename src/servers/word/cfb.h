/*
 * cfb.h - Compound File Binary (OLE2) writing and reading for the word
 * server's encrypted packages (cfb.c).
 */
#ifndef MB_SERVERS_WORD_CFB_H
#define MB_SERVERS_WORD_CFB_H

#include <stddef.h>

#include "util/util.h"

typedef struct wd_cfb_entry {
    const char *path;  /* "EncryptionInfo", "\x06DataSpaces/Version", ... (ASCII) */
    int storage;       /* a storage (directory) rather than a stream */
    const void *data;
    size_t len;
} wd_cfb_entry;

/* Appends a version-3 compound file holding `entries` (storages listed
 * before their children) to out; 0 or -1. */
int wd_cfb_write(const wd_cfb_entry *entries, size_t n, mb_buf *out);
/* True when data starts with the compound file signature. */
int wd_cfb_is(const void *data, size_t len);
/* The bytes of the stream called `name` (any storage); 0, or -1 and *why. */
int wd_cfb_read(const void *data, size_t len, const char *name, mb_buf *out, char **why);

#endif /* MB_SERVERS_WORD_CFB_H */
