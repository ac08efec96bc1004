/*
 * egress.c - the core's use of the egress layer (src/egress): which sandboxes
 * get a proxy socket directory (those whose profile has a server with an
 * "egress" allow-list), the socket of each such server, the environment
 * variable that tells the server where it is, and the per-sandbox log.
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

char *mb_core__egress_server(mb_core *core, const char *id, const mb_profile_server *ps,
                             mb_err *err)
{
    json_t *allow = json_object_get(ps->entry, "egress");
    if (!allow || !core->egress) return NULL;
    size_t n = json_array_size(allow);
    const char **v = mb_calloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = json_string_value(json_array_get(allow, i));
    char *dir = mb_core__egress_dir(core, id, 1);
    char *logs = mb_core__path_logs(core, id, NULL);
    if (mkdir(logs, 0700) != 0 && errno != EEXIST) mb_warn("cannot create %s", logs);
    char *log = mb_core__path_logs(core, id, "egress.log");
    int rc = mb_egress_open(core->egress, id, ps->name, dir, v, log, err);
    free(log);
    free(logs);
    free(dir);
    free(v);
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
