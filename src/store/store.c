/*
 * store.c - the face of the store over its two backends: SQLite (one
 * machine, the default) and PostgreSQL (many nodes). mb_store_open picks one
 * by the form of its argument; every other call goes to that backend's table.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

int mb_store_is_url(const char *path)
{
    return !strncmp(path, "postgresql://", 13) || !strncmp(path, "postgres://", 11);
}

int mb_store_open(const char *path, mb_store **out, mb_err *err)
{
    mb_store *st = mb_calloc(1, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    st->node = -1;
    int rc = mb_store_is_url(path) ? mb_store__pg_open(st, path, err)
                                   : mb_store__sq_open(st, path, err);
    if (rc) {
        mb_store_close(st);
        return rc;
    }
    *out = st;
    return MB_OK;
}

void mb_store_close(mb_store *st)
{
    if (!st) return;
    mb_store__sq_close(st);
    mb_store__pg_close(st);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

void mb_store_set_node(mb_store *st, int ordinal) { st->node = ordinal; }

#define MB_STORE_OP_CALL(r, name, params, args) \
    r mb_store_##name params { return st->ops->name args; }
MB_STORE_OPS(MB_STORE_OP_CALL)
#undef MB_STORE_OP_CALL

void mb_server_recs_free(mb_server_rec *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(recs[i].metadata);
        json_decref(recs[i].auth_data);
        json_decref(recs[i].tags);
    }
    free(recs);
}
