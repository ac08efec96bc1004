/*
 * quota.c - what one tenant (a key owner: keys of one owner share) may hold
 * at once, so that one key cannot starve the others: live sandboxes,
 * acquires in progress, upload bytes in flight; and one upload per sandbox
 * at a time. Refusals are MB_ELIMIT (HTTP 429, with a Retry-After in
 * seconds) or, for a second upload to one sandbox, MB_ECONFLICT (409).
 *
 * The counters live in memory (a restarted daemon starts from zero in
 * flight; live sandboxes are counted in the store). Live sandboxes are
 * counted as the store's occupied records plus the acquires in progress,
 * which may count an acquire twice for a moment: the limit errs on the
 * safe side.
 */
#include "core/core_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One owner with something in flight, or one sandbox being uploaded to. */
struct mb_quota_ent {
    char *name;
    uint64_t acquiring;
    uint64_t upload_bytes;
    struct mb_quota_ent *next;
};

static mb_quota_ent *find(mb_quota_ent **list, const char *name, int create)
{
    for (mb_quota_ent *e = *list; e; e = e->next)
        if (!strcmp(e->name, name)) return e;
    if (!create) return NULL;
    mb_quota_ent *e = mb_calloc(1, sizeof *e);
    e->name = mb_strdup(name);
    e->next = *list;
    *list = e;
    return e;
}

static void drop_if_idle(mb_quota_ent **list, mb_quota_ent *e)
{
    if (e->acquiring || e->upload_bytes) return;
    mb_quota_ent **p = list;
    while (*p != e) p = &(*p)->next;
    *p = e->next;
    free(e->name);
    free(e);
}

int mb_core_acquire_begin(mb_core *core, const char *owner, unsigned *retry_after, mb_err *err)
{
    const mb_config *cfg = &core->cfg;
    int rc = MB_OK;
    pthread_mutex_lock(&core->quota_lock);
    mb_quota_ent *e = find(&core->quota_owners, owner, 1);
    if (cfg->key_max_acquiring && e->acquiring >= cfg->key_max_acquiring) {
        *retry_after = 1;
        rc = mb_err_set(err, MB_ELIMIT,
                        "Too many acquires in progress for this API key (%llu, the limit is "
                        "%llu): retry when one has finished",
                        (unsigned long long)e->acquiring,
                        (unsigned long long)cfg->key_max_acquiring);
    }
    size_t live = 0;
    if (!rc && cfg->key_max_sandboxes) {
        rc = mb_store_sandbox_count(core->store, owner, &live, err);
        if (!rc && live + e->acquiring >= cfg->key_max_sandboxes) {
            *retry_after = 30;
            rc = mb_err_set(err, MB_ELIMIT,
                            "This API key has %llu live sandboxes (and %llu being acquired); "
                            "the limit is %llu: release some first",
                            (unsigned long long)live, (unsigned long long)e->acquiring,
                            (unsigned long long)cfg->key_max_sandboxes);
        }
    }
    if (!rc) e->acquiring++;
    drop_if_idle(&core->quota_owners, e);
    pthread_mutex_unlock(&core->quota_lock);
    return rc;
}

void mb_core_acquire_end(mb_core *core, const char *owner)
{
    pthread_mutex_lock(&core->quota_lock);
    mb_quota_ent *e = find(&core->quota_owners, owner, 0);
    if (e && e->acquiring) {
        e->acquiring--;
        drop_if_idle(&core->quota_owners, e);
    }
    pthread_mutex_unlock(&core->quota_lock);
}

int mb_core_upload_begin(mb_core *core, const char *id, const char *owner, uint64_t bytes,
                         unsigned *retry_after, mb_err *err)
{
    const mb_config *cfg = &core->cfg;
    int rc = MB_OK;
    pthread_mutex_lock(&core->quota_lock);
    mb_quota_ent *o = find(&core->quota_owners, owner, 1);
    if (find(&core->quota_uploads, id, 0)) {
        rc = mb_err_set(err, MB_ECONFLICT,
                        "Another upload to sandbox %s is in progress: one upload per sandbox "
                        "at a time; retry when it has finished",
                        id);
    } else if (cfg->key_max_upload && o->upload_bytes + bytes > cfg->key_max_upload) {
        *retry_after = 5;
        rc = mb_err_set(err, MB_ELIMIT,
                        "Uploads in progress for this API key would hold %llu bytes, over the "
                        "limit of %llu bytes: retry when one has finished",
                        (unsigned long long)(o->upload_bytes + bytes),
                        (unsigned long long)cfg->key_max_upload);
    } else {
        o->upload_bytes += bytes;
        /* upload_bytes marks the sandbox entry as busy (and carries the
         * reservation for diagnostics). */
        find(&core->quota_uploads, id, 1)->upload_bytes = bytes ? bytes : 1;
    }
    drop_if_idle(&core->quota_owners, o);
    pthread_mutex_unlock(&core->quota_lock);
    return rc;
}

void mb_core_upload_end(mb_core *core, const char *id, const char *owner, uint64_t bytes)
{
    pthread_mutex_lock(&core->quota_lock);
    mb_quota_ent *u = find(&core->quota_uploads, id, 0);
    if (u) {
        u->upload_bytes = 0;
        drop_if_idle(&core->quota_uploads, u);
    }
    mb_quota_ent *o = find(&core->quota_owners, owner, 0);
    if (o) {
        o->upload_bytes -= bytes < o->upload_bytes ? bytes : o->upload_bytes;
        drop_if_idle(&core->quota_owners, o);
    }
    pthread_mutex_unlock(&core->quota_lock);
}

void mb_core__quota_free(mb_core *core)
{
    mb_quota_ent *lists[] = {core->quota_owners, core->quota_uploads};
    for (int i = 0; i < 2; i++) {
        for (mb_quota_ent *e = lists[i], *next; e; e = next) {
            next = e->next;
            free(e->name);
            free(e);
        }
    }
    core->quota_owners = core->quota_uploads = NULL;
}
