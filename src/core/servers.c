/*
 * servers.c - the MCP servers of a sandbox: registering them with the
 * gateway with their profile's environment, starting them (in parallel) and
 * waiting until they are ready, and reporting their state.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* The profile's environment for a server plus the pass-through variables. */
static const char **server_envp(mb_core *core, const mb_profile_server *ps, const char *extra)
{
    size_t n = 0, m = 0;
    while (ps->envp && ps->envp[n]) n++;
    while (core->server_env[m]) m++;
    const char **envp = mb_calloc(n + m + 2, sizeof *envp);
    for (size_t i = 0; i < n; i++) envp[i] = ps->envp[i];
    for (size_t i = 0; i < m; i++) envp[n + i] = core->server_env[i];
    envp[n + m] = extra;
    return envp;
}

int mb_core__add_server(mb_core *core, const char *id, const mb_profile_server *ps, mb_err *err)
{
    char *egress = mb_core__egress_server(core, id, ps, NULL);
    const char **envp = server_envp(core, ps, egress);
    mb_backend_spec spec = {.argv = (const char *const *)ps->argv, .envp = envp, .cwd = ps->cwd,
                            .tools_static = json_is_true(json_object_get(ps->entry,
                                                                         "tools_static")),
                            .forward_headers = (const char *const *)ps->headers};
    int rc = mb_gateway_add(core->gw, id, ps->name, &spec, err);
    free(envp);
    free(egress);
    return rc;
}

static void set_error(mb_server_rec *s, const char *msg)
{
    snprintf(s->status, sizeof s->status, "error");
    if (!s->metadata) s->metadata = json_object();
    json_object_set_new(s->metadata, "error", json_string(msg));
}

static void start_one(void *arg)
{
    mb_start_job *j = *(mb_start_job **)arg;
    j->ok = mb_core__add_server(j->core, j->id, j->ps, &j->err) == MB_OK &&
            mb_gateway_start(j->core->gw, j->id, j->ps->name, 0, &j->err) == MB_OK;
}

/* A spawn returns once the server's exec inside the sandbox succeeded: a few
 * milliseconds each, and more on a busy host. The servers of one sandbox that
 * are not running yet are therefore spawned at once, on the daemon's worker
 * threads and the caller's (workers.c; the gateway and the sandbox handle
 * take concurrent calls); those already registered (a pool sandbox's) cost
 * nothing to start and are done inline. */
void mb_core__start_servers(mb_start_job *jobs, size_t n)
{
    mb_start_job **todo = mb_calloc(n ? n : 1, sizeof *todo);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        mb_start_job *j = &jobs[i];
        if (mb_gateway_info(j->core->gw, j->id, j->ps->name, NULL, NULL) != MB_OK)
            todo[m++] = j;
        else if (j->respec)
            start_one(&j);
        else /* restarted if it died while idle */
            j->ok = mb_gateway_start(j->core->gw, j->id, j->ps->name, 0, &j->err) == MB_OK;
    }
    mb_core__parallel(start_one, todo, sizeof *todo, m);
    free(todo);
}

void mb_core__servers_up(mb_core *core, const mb_sandbox_rec *rec, mb_server_rec *srv, size_t n)
{
    const mb_profile *p = mb_core__profile(core, rec->benchmark);
    /* A pool sandbox runs every server of its profile: only those asked for
     * stay reachable. */
    for (size_t j = 0; p && j < p->nservers; j++) {
        int asked = 0;
        for (size_t i = 0; i < n && !asked; i++) asked = !strcmp(srv[i].name, p->servers[j].name);
        if (!asked) mb_gateway_remove_server(core->gw, rec->id, p->servers[j].name);
    }
    int *started = mb_calloc(n ? n : 1, sizeof *started);
    mb_start_job *jobs = mb_calloc(n ? n : 1, sizeof *jobs);
    size_t *job_of = mb_calloc(n ? n : 1, sizeof *job_of);
    size_t njobs = 0;
    for (size_t i = 0; i < n; i++) {
        const mb_profile_server *ps = p ? mb_profile_server_find(p, srv[i].name) : NULL;
        if (!ps) {
            mb_buf offered = {0};
            for (size_t j = 0; p && j < p->nservers; j++)
                mb_buf_printf(&offered, "%s%s", j ? ", " : "", p->servers[j].name);
            char *msg = mb_asprintf("'%s' is not available in the '%s' profile of this mcpbox "
                                    "(it offers: %s)",
                                    srv[i].name, p ? p->name : "?",
                                    offered.len ? offered.data : "nothing");
            set_error(&srv[i], msg);
            free(msg);
            mb_buf_free(&offered);
            continue;
        }
        if (!srv[i].metadata) srv[i].metadata = json_object();
        json_object_set_new(srv[i].metadata, "upstream", json_string(ps->upstream));
        job_of[i] = njobs;
        jobs[njobs++] = (mb_start_job){.core = core, .id = rec->id, .ps = ps,
                                       .respec = rec->egress[0] != '\0'};
        started[i] = 1;
    }
    mb_core__start_servers(jobs, njobs);
    for (size_t i = 0; i < n; i++)
        if (started[i] && !jobs[job_of[i]].ok) {
            set_error(&srv[i], jobs[job_of[i]].err.msg);
            started[i] = 0;
        }
    free(jobs);
    free(job_of);
    /* All started in parallel above; now wait for each to be ready. */
    for (size_t i = 0; i < n; i++) {
        mb_err err;
        if (started[i] &&
            mb_gateway_start(core->gw, rec->id, srv[i].name, core->cfg.start_timeout_s * 1000,
                             &err) != MB_OK)
            set_error(&srv[i], err.msg);
    }
    free(started);
    mb_gateway_set_tenant(core->gw, rec->id, rec->owner);
}

int mb_core_server_state(mb_core *core, const char *sandbox_id, const char *server,
                         json_t **meta, int *ready)
{
    return mb_gateway_info(core->gw, sandbox_id, server, meta, ready);
}

mb_gateway *mb_core_gateway(mb_core *core) { return core->gw; }
