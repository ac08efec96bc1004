/*
 * hosted.c - what this mcpbox serves, asked per benchmark: which servers a
 * profile offers (so that no dead URL is ever handed out), a server's
 * environment as the profile sets it, the note an acquire carries when the
 * benchmark's seed is missing, and commands run inside a live sandbox on a
 * client's behalf (the JSON initialize and dump of the /sandbox/{server}
 * family).
 */
#include "core/core_int.h"

#include <stdlib.h>
#include <string.h>

int mb_core_offers(mb_core *core, const char *benchmark, const char *server)
{
    const mb_profile *p = mb_core__profile(core, benchmark);
    return p && mb_profile_server_find(p, server) != NULL;
}

char *mb_core_offered(mb_core *core, const char *benchmark)
{
    const mb_profile *p = mb_core__profile(core, benchmark);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (size_t i = 0; p && i < p->nservers; i++)
        mb_buf_printf(&b, "%s%s", i ? ", " : "", p->servers[i].name);
    return mb_buf_steal(&b);
}

const char *mb_core_server_env(mb_core *core, const char *benchmark, const char *server,
                               const char *key)
{
    const mb_profile *p = mb_core__profile(core, benchmark);
    const mb_profile_server *ps = p ? mb_profile_server_find(p, server) : NULL;
    size_t n = strlen(key);
    for (char **e = ps ? ps->envp : NULL; e && *e; e++)
        if (!strncmp(*e, key, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

char *mb_core_seed_note(mb_core *core, const char *benchmark)
{
    const mb_profile *p = mb_core__profile(core, benchmark);
    if (!p || !p->seed.when_missing[0]) return NULL;
    for (size_t i = 0; i < core->cfg.n_seeds; i++)
        if (!strcmp(core->cfg.seeds[i].preset, p->name)) return NULL;
    return mb_strdup(p->seed.when_missing);
}

int mb_core_exec(mb_core *core, const char *owner, const char *id, const char *const *argv,
                 const void *in, size_t in_len, size_t out_cap, mb_buf *out, mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    mb_live *l = mb_core__live_get(core, id);
    mb_exec_result res;
    memset(&res, 0, sizeof res);
    if (!l) {
        rc = mb_err_set(err, MB_ECONFLICT,
                        "sandbox %s is not running (%s); release it and acquire a new one", id,
                        rec.error[0] ? rec.error : "it failed");
    } else {
        mb_exec_spec spec = {.argv = argv, .stdin_data = in, .stdin_len = in_len,
                             .timeout_ms = core->cfg.call_timeout_s * 1000,
                             .output_cap = out_cap};
        rc = mb_sandbox_exec(l->sb, &spec, &res, err);
    }
    mb_core__live_put(core, l);
    mb_core__unlock(core, lock);
    if (!rc && res.truncated)
        rc = mb_err_set(err, MB_ETOOBIG, "the output of %s is over %zu bytes", argv[0], out_cap);
    else if (!rc && (res.exit_code != 0 || res.timed_out))
        rc = mb_err_set(err, MB_EIO, "%s failed inside the sandbox (%s %d)", argv[0],
                        res.timed_out ? "timed out after" : "exit status",
                        res.timed_out ? core->cfg.call_timeout_s : res.exit_code);
    if (!rc) mb_buf_append(out, res.out.data ? res.out.data : "", res.out.len);
    mb_exec_result_free(&res);
    return rc;
}
