/*
 * live.c - the table of running sandboxes: id -> sandbox handle, with
 * reference counts so that a release never frees a handle another thread is
 * about to use (a server spawn from the gateway's reactor, a reset, stats).
 *
 * Invariant: an entry is in the table with refs >= 1 (the table's own
 * reference). mb_core__live_take() unlinks it, drops the table's reference and
 * waits for refs to reach 0; from then on the caller owns the entry alone.
 */
#include "core/core_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned bucket(const char *id)
{
    return (unsigned)(mb_hash_str(id) % MB_LIVE_BUCKETS);
}

void mb_core__live_add(mb_core *core, const char *id, mb_sandbox *sb, const mb_profile *profile)
{
    mb_live *l = mb_calloc(1, sizeof *l);
    snprintf(l->id, sizeof l->id, "%s", id);
    l->sb = sb;
    l->profile = profile;
    l->refs = 1;
    pthread_mutex_lock(&core->live_lock);
    unsigned b = bucket(id);
    l->next = core->live[b];
    core->live[b] = l;
    pthread_mutex_unlock(&core->live_lock);
}

mb_live *mb_core__live_get(mb_core *core, const char *id)
{
    pthread_mutex_lock(&core->live_lock);
    mb_live *l = core->live[bucket(id)];
    while (l && strcmp(l->id, id) != 0) l = l->next;
    if (l) l->refs++;
    pthread_mutex_unlock(&core->live_lock);
    return l;
}

void mb_core__live_put(mb_core *core, mb_live *l)
{
    if (!l) return;
    pthread_mutex_lock(&core->live_lock);
    if (--l->refs == 0) pthread_cond_broadcast(&core->live_cv);
    pthread_mutex_unlock(&core->live_lock);
}

/* Unlinks `l` (live_lock held), then waits until nobody else holds it. */
static mb_live *unlink_and_drain(mb_core *core, mb_live **pp)
{
    mb_live *l = *pp;
    *pp = l->next;
    l->next = NULL;
    l->refs--;
    while (l->refs > 0) pthread_cond_wait(&core->live_cv, &core->live_lock);
    return l;
}

mb_live *mb_core__live_take(mb_core *core, const char *id)
{
    pthread_mutex_lock(&core->live_lock);
    mb_live **pp = &core->live[bucket(id)];
    while (*pp && strcmp((*pp)->id, id) != 0) pp = &(*pp)->next;
    mb_live *l = *pp ? unlink_and_drain(core, pp) : NULL;
    pthread_mutex_unlock(&core->live_lock);
    return l;
}

mb_live *mb_core__live_take_any(mb_core *core)
{
    pthread_mutex_lock(&core->live_lock);
    mb_live *l = NULL;
    for (unsigned b = 0; !l && b < MB_LIVE_BUCKETS; b++)
        if (core->live[b]) l = unlink_and_drain(core, &core->live[b]);
    pthread_mutex_unlock(&core->live_lock);
    return l;
}
