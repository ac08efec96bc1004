/*
 * services.c - node-wide services some servers stand on (a mail system for
 * poste_email_toolathlon, a Canvas REST service for canvas, a cloud emulator
 * for google_cloud). A service registers once, before the daemon serves, and
 * is then told about every sandbox whose servers include its server: attach
 * at acquire (before the servers start, so they find their state), detach at
 * release, reset at reset. The table is written only between mb_core_open
 * and mb_core_start (core->started; later adds are refused) and read without
 * a lock afterwards, once the warm pool and the request threads run.
 */
#include "core/core_int.h"

#include <string.h>

int mb_core_service_add(mb_core *core, const mb_core_service *svc, mb_err *err)
{
    mb_assert(svc && svc->server && svc->attach && svc->detach);
    if (core->started)
        return mb_err_set(err, MB_ECONFLICT, "node service %s registered after the core started",
                          svc->server);
    if (core->n_services >= MB_MAX_SERVICES)
        return mb_err_set(err, MB_ELIMIT, "too many node services (at most %d)", MB_MAX_SERVICES);
    for (size_t i = 0; i < core->n_services; i++)
        if (!strcmp(core->services[i].server, svc->server))
            return mb_err_set(err, MB_ECONFLICT, "a service for %s is registered already",
                              svc->server);
    core->services[core->n_services++] = *svc;
    return MB_OK;
}

void *mb_core_service_ctx(mb_core *core, const char *server)
{
    for (size_t i = 0; i < core->n_services; i++)
        if (!strcmp(core->services[i].server, server)) return core->services[i].ctx;
    return NULL;
}

int mb_core_service_call(mb_core *core, const char *owner, const char *id,
                         int (*fn)(void *arg, const mb_sandbox_rec *rec, mb_err *err), void *arg,
                         mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    rc = fn(arg, &rec, err);
    mb_core__unlock(core, lock);
    return rc;
}

static int has_server(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* Detaches services[0..n) that the request's servers use, last first. */
static void detach_first(mb_core *core, const mb_sandbox_rec *rec, const mb_acquire_req *req,
                         size_t n)
{
    for (size_t j = n; j-- > 0;) {
        const mb_core_service *u = &core->services[j];
        if (has_server(req->servers, req->n_servers, u->server)) u->detach(u->ctx, rec);
    }
}

int mb_core__services_attach(mb_core *core, const mb_sandbox_rec *rec, const mb_acquire_req *req,
                             mb_err *err)
{
    for (size_t i = 0; i < core->n_services; i++) {
        const mb_core_service *s = &core->services[i];
        if (!has_server(req->servers, req->n_servers, s->server)) continue;
        int rc = s->attach(s->ctx, rec, req, err);
        if (rc) {
            /* Undo this one (it may have done part of its work) and those before it. */
            detach_first(core, rec, req, i + 1);
            return rc;
        }
    }
    return MB_OK;
}

void mb_core__services_undo(mb_core *core, const mb_sandbox_rec *rec, const mb_acquire_req *req)
{
    detach_first(core, rec, req, core->n_services);
}

/* The services a recorded sandbox uses, from its server records. */
static void each_service(mb_core *core, const mb_sandbox_rec *rec,
                         void (*fn)(const mb_core_service *s, const mb_sandbox_rec *rec, void *arg),
                         void *arg)
{
    if (!core->n_services) return;
    mb_server_rec *srv = NULL;
    size_t n = 0;
    if (mb_store_server_list(core->store, rec->id, &srv, &n, NULL) != MB_OK) return;
    for (size_t i = 0; i < core->n_services; i++)
        for (size_t k = 0; k < n; k++)
            if (!strcmp(srv[k].name, core->services[i].server)) {
                fn(&core->services[i], rec, arg);
                break;
            }
    mb_server_recs_free(srv, n);
}

static void detach_one(const mb_core_service *s, const mb_sandbox_rec *rec, void *arg)
{
    (void)arg;
    s->detach(s->ctx, rec);
}

void mb_core__services_detach(mb_core *core, const mb_sandbox_rec *rec)
{
    each_service(core, rec, detach_one, NULL);
}

typedef struct reset_arg {
    int rc;
    mb_err *err;
} reset_arg;

static void reset_one(const mb_core_service *s, const mb_sandbox_rec *rec, void *arg)
{
    reset_arg *a = arg;
    if (a->rc || !s->reset) return;
    int rc = s->reset(s->ctx, rec, a->err);
    if (rc) a->rc = mb_err_wrap(a->err, rc, "reset of %s's data", s->server);
}

int mb_core__services_reset(mb_core *core, const mb_sandbox_rec *rec, mb_err *err)
{
    reset_arg a = {MB_OK, err};
    each_service(core, rec, reset_one, &a);
    return a.rc;
}

void mb_core__services_binds(mb_core *core, const char *id, const mb_profile *p,
                             mb_sandbox_opts *o, mb_sb_paths *paths)
{
    for (size_t i = 0; i < core->n_services; i++) {
        const mb_core_service *s = &core->services[i];
        if (!s->bind_dir || !s->bind_inside || !mb_profile_server_find(p, s->server)) continue;
        char *dir = s->bind_dir(s->ctx, id);
        if (!dir) continue;
        paths->svc_dirs[i] = dir;
        paths->binds[o->n_binds++] = (mb_sandbox_bind){dir, s->bind_inside};
    }
}
