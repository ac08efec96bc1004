/*
 * egress.c - the core's use of the egress layer (src/egress): which sandboxes
 * get a proxy socket directory (those whose profile has a server with an
 * "egress" allow-list), the socket of each such server, the environment
 * variable that tells the server where it is, and the per-sandbox log.
 *
 * An acquire request may carry its own allow-list ("egress"): it can only
 * narrow the profile's (checked by mb_core_egress_refusal before the acquire,
 * applied per server by mb_core__egress_server from the sandbox's record, so
 * that restarts and adoption keep it).
 *
 * Paths of sandbox ID (DIR = the data dir):
 *   DIR/egress/ID/                 bound read-only at /mnt/egress inside
 *   DIR/egress/ID/SERVER.sock      that server's proxy (mode 0666)
 *   DIR/workspaces/ID/.logs/egress.log   one line per connection, allowed or denied
 */
#include "core/core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mb_core__egress_open(mb_core *core, mb_err *err)
{
    const char *fx[MB_MAX_ALLOWED + 1] = {0};
    for (size_t i = 0; i < core->cfg.n_egress_fixtures; i++) fx[i] = core->cfg.egress_fixtures[i];
    mb_egress_opts o = {.offline = core->cfg.egress_off, .fixtures = fx};
    return mb_egress_new(&o, &core->egress, err);
}

void mb_core__egress_close(mb_core *core)
{
    mb_egress_free(core->egress);
    core->egress = NULL;
}

int mb_core__profile_has_egress(const mb_profile *p)
{
    for (size_t i = 0; p && i < p->nservers; i++)
        if (json_object_get(p->servers[i].entry, "egress")) return 1;
    return 0;
}

char *mb_core__egress_dir(mb_core *core, const char *id, int create)
{
    if (create) {
        char *root = mb_core__path_top(core, "egress");
        if (mkdir(root, 0711) != 0 && errno != EEXIST) mb_warn("cannot create %s", root);
        free(root);
    }
    char *dir = mb_core__path_egress(core, id);
    if (create && mkdir(dir, 0755) != 0 && errno != EEXIST) mb_warn("cannot create %s", dir);
    return dir;
}

/* The profile's allow-list of a server, NULL-terminated (borrowed strings). */
static const char **profile_allow(json_t *allow)
{
    size_t n = json_array_size(allow);
    const char **v = mb_calloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = json_string_value(json_array_get(allow, i));
    return v;
}

char *mb_core_egress_refusal(mb_core *core, const char *benchmark, const char *const *servers,
                             size_t n_servers, const char *entry)
{
    const mb_profile *p = mb_core__profile(core, benchmark);
    mb_buf lists = {0};
    mb_buf_puts(&lists, "");
    for (size_t i = 0; p && i < n_servers; i++) {
        const mb_profile_server *ps = mb_profile_server_find(p, servers[i]);
        json_t *allow = ps ? json_object_get(ps->entry, "egress") : NULL;
        if (!allow) continue;
        const char **v = profile_allow(allow);
        int ok = mb_egress_within(v, entry);
        free(v);
        if (ok) {
            mb_buf_free(&lists);
            return NULL;
        }
        char *text = json_dumps(allow, JSON_COMPACT);
        mb_buf_printf(&lists, "%s%s %s", lists.len ? ", " : "", servers[i], text);
        free(text);
    }
    char *msg = mb_asprintf(
        "Value error, '%s' is not within the egress allow-list the '%s' profile gives the "
        "servers asked for (%s); a request may only narrow it", entry,
        p ? p->name : MB_PROFILE_DEFAULT, lists.len ? lists.data : "none of them has egress");
    mb_buf_free(&lists);
    return msg;
}

/* The server's allow-list: the profile's, narrowed by the acquire request's
 * when the sandbox's record holds one (entries of the request that fall
 * within the profile's list for this server; none = nothing reachable). */
static const char **effective_allow(mb_core *core, const char *id, json_t *allow, json_t **req)
{
    const char **prof = profile_allow(allow);
    mb_sandbox_rec rec;
    *req = NULL;
    if (mb_store_sandbox_get(core->store, id, &rec, NULL) != MB_OK || !rec.egress[0]) return prof;
    *req = json_loads(rec.egress, 0, NULL);
    size_t n = json_array_size(*req), k = 0;
    const char **v = mb_calloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const char *e = json_string_value(json_array_get(*req, i));
        if (e && mb_egress_within(prof, e)) v[k++] = e;
    }
    free(prof);
    return v;
}

char *mb_core__egress_server(mb_core *core, const char *id, const mb_profile_server *ps,
                             mb_err *err)
{
    json_t *allow = json_object_get(ps->entry, "egress");
    if (!allow || !core->egress) return NULL;
    json_t *req;
    const char **v = effective_allow(core, id, allow, &req);
    char *dir = mb_core__egress_dir(core, id, 1);
    char *logs = mb_core__path_logs(core, id, NULL);
    if (mkdir(logs, 0700) != 0 && errno != EEXIST) mb_warn("cannot create %s", logs);
    char *log = mb_core__path_logs(core, id, "egress.log");
    int rc = mb_egress_open(core->egress, id, ps->name, dir, v, log, err);
    free(log);
    free(logs);
    free(dir);
    free(v);
    json_decref(req);
    if (rc) {
        mb_warn("sandbox %s: no egress for %s: %s", id, ps->name, err ? err->msg : "");
        return NULL;
    }
    return mb_asprintf(MB_EGRESS_ENV "=" MB_EGRESS_DIR_INSIDE "/%s.sock", ps->name);
}

void mb_core__egress_release(mb_core *core, const char *id)
{
    mb_egress_close_sandbox(core->egress, id);
    char *dir = mb_core__egress_dir(core, id, 0);
    rmdir(dir); /* empty once its sockets are gone; absent for most sandboxes */
    free(dir);
}
