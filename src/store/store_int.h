/*
 * store_int.h - what the store's own files share: the handle and statement
 * helpers. Not part of the layer's face; include store.h from outside.
 */
#ifndef MB_STORE_INT_H
#define MB_STORE_INT_H

#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>

struct mb_store {
    sqlite3 *db;
    pthread_mutex_t lock; /* held for the length of each public call */
};

int mb_store__fail(mb_store *st, mb_err *err, const char *what);
int mb_store__prepare(mb_store *st, const char *sql, sqlite3_stmt **out, mb_err *err);
int mb_store__exec(mb_store *st, const char *sql, mb_err *err);
/* Copies a text column into a fixed buffer (truncating), NULL as "". */
void mb_store__text(sqlite3_stmt *s, int col, char *dst, size_t cap);

#define STORE_LOCK(st) pthread_mutex_lock(&(st)->lock)
#define STORE_UNLOCK(st) pthread_mutex_unlock(&(st)->lock)

#endif
