/*
 * locks.c - one mutex per sandbox id, made on first use and freed when its
 * last user leaves, so that a long operation on one sandbox (a dump, an
 * extraction, a reset) never holds up another sandbox. (Striped locks did:
 * two ids hashing to one stripe waited on each other.)
 *
 * The table itself is guarded by core->locks_lock, held only to find or
 * free an entry, never while an entry's mutex is waited on.
 */
#include "core/core_int.h"

#include <stdlib.h>
#include <string.h>

struct mb_sblock {
    char *id;
    pthread_mutex_t mu;
    int users;             /* holders and waiters; under core->locks_lock */
    struct mb_sblock *next;
};

static unsigned bucket(const char *id)
{
    return (unsigned)(mb_hash_str(id) % MB_LOCK_BUCKETS);
}

mb_sblock *mb_core__lock(mb_core *core, const char *id)
{
    pthread_mutex_lock(&core->locks_lock);
    mb_sblock **head = &core->locks[bucket(id)], *l = *head;
    while (l && strcmp(l->id, id)) l = l->next;
    if (!l) {
        l = mb_calloc(1, sizeof *l);
        l->id = mb_strdup(id);
        pthread_mutex_init(&l->mu, NULL);
        l->next = *head;
        *head = l;
    }
    l->users++;
    pthread_mutex_unlock(&core->locks_lock);
    pthread_mutex_lock(&l->mu);
    return l;
}

void mb_core__unlock(mb_core *core, mb_sblock *l)
{
    pthread_mutex_unlock(&l->mu);
    pthread_mutex_lock(&core->locks_lock);
    if (--l->users == 0) {
        mb_sblock **p = &core->locks[bucket(l->id)];
        while (*p != l) p = &(*p)->next;
        *p = l->next;
        pthread_mutex_destroy(&l->mu);
        free(l->id);
        free(l);
    }
    pthread_mutex_unlock(&core->locks_lock);
}

int mb_core_lock_held(mb_core *core, const char *id)
{
    pthread_mutex_lock(&core->locks_lock);
    mb_sblock *l = core->locks[bucket(id)];
    while (l && strcmp(l->id, id)) l = l->next;
    int held = l && mb_mutex_held(&l->mu);
    pthread_mutex_unlock(&core->locks_lock);
    return held;
}

size_t mb_core__locks_in_use(mb_core *core)
{
    size_t n = 0;
    pthread_mutex_lock(&core->locks_lock);
    for (int b = 0; b < MB_LOCK_BUCKETS; b++)
        for (mb_sblock *l = core->locks[b]; l; l = l->next) n++;
    pthread_mutex_unlock(&core->locks_lock);
    return n;
}
