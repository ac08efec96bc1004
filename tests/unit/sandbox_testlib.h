/*
 * sandbox_testlib.h - helpers shared by the sandbox unit tests
 * (test_sandbox_*.c): a scratch directory per test binary, options for new
 * sandboxes, and running shell snippets inside them.
 *
 * The sandboxes are cloned by a zygote helper started from the mcpbox binary
 * named by $MCPBOX_BIN (tests/run sets it to the ASan build), else
 * build/asan/mcpbox, else build/mcpbox, as the daemon's are.
 * The tests need root; without it they skip.
 */
#ifndef MB_SANDBOX_TESTLIB_H
#define MB_SANDBOX_TESTLIB_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "util/util.h"

typedef struct sbt_env {
    char root[256];       /* scratch dir of this test binary */
    char state_root[300]; /* <root>/state */
    char bin[PATH_MAX];        /* the mcpbox binary */
    mb_zygote *zygote;         /* started from bin */
} sbt_env;

/* One sandbox's option strings. */
typedef struct sbt_box {
    char id[37];
    char state_dir[400];
    char workspace[400];
    mb_sandbox_opts opts;
    mb_sandbox *sb;
} sbt_box;

static inline int sbt_is_root(void) { return geteuid() == 0; }

static inline int sbt_env_init(sbt_env *e, const char *tag)
{
    memset(e, 0, sizeof *e);
    const char *cands[3] = {getenv("MCPBOX_BIN"), "build/asan/mcpbox", "build/mcpbox"};
    for (int i = 0; i < 3 && !e->bin[0]; i++)
        if (cands[i] && access(cands[i], X_OK) == 0 && !realpath(cands[i], e->bin)) e->bin[0] = 0;
    if (!e->bin[0]) {
        fprintf(stderr, "sandbox tests: no mcpbox binary (set MCPBOX_BIN or build build/asan/mcpbox)\n");
        return -1;
    }
    mb_err err;
    if (mb_zygote_start(e->bin, &e->zygote, &err) != 0) {
        fprintf(stderr, "sandbox tests: %s\n", err.msg);
        return -1;
    }
    snprintf(e->root, sizeof e->root, "/tmp/mcpbox-%s-XXXXXX", tag);
    if (!mkdtemp(e->root)) return -1;
    chmod(e->root, 0700); /* like a daemon's data dir: only root may enter */
    snprintf(e->state_root, sizeof e->state_root, "%s/state", e->root);
    return mkdir(e->state_root, 0700);
}

static inline int sbt_keep_none(void *ctx, const char *id) { return 0; }

/* Removes the scratch dir after sweeping every state root in it, so that a
 * failed assertion (which skips a test's own clean-up) leaks no sandbox. */
static inline void sbt_env_done(sbt_env *e)
{
    char path[512];
    const char *roots[] = {"state", "state-crash", NULL};
    for (int i = 0; roots[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", e->root, roots[i]);
        if (access(path, F_OK) == 0) (void)mb_sandbox_sweep(path, sbt_keep_none, NULL, NULL);
    }
    (void)mb_rm_rf(e->root, NULL);
    mb_zygote_stop(e->zygote);
    e->zygote = NULL;
}

/* A uid range no other test (or helper) is likely to use. */
static inline uint32_t sbt_uid_base(void)
{
    uint32_t r;
    mb_random_bytes(&r, sizeof r, NULL);
    return 0x20000000u + (r % 0x4000u) * MB_SANDBOX_UID_RANGE;
}

static inline void sbt_box_init(sbt_box *b, const sbt_env *e, const char *name,
                                const mb_sandbox_limits *lim)
{
    char id[37];
    mb_uuid4(id);
    memset(b, 0, sizeof *b);
    memcpy(b->id, id, sizeof id);
    snprintf(b->state_dir, sizeof b->state_dir, "%s/%s", e->state_root, id);
    snprintf(b->workspace, sizeof b->workspace, "%s/ws-%s-%.8s", e->root, name, id);
    b->opts.id = b->id;
    b->opts.state_dir = b->state_dir;
    b->opts.workspace = b->workspace;
    b->opts.mcpbox_bin = e->bin;
    b->opts.zygote = e->zygote;
    b->opts.uid_base = sbt_uid_base();
    if (lim) b->opts.limits = *lim;
}

static inline int sbt_box_create(sbt_box *b, const sbt_env *e, const char *name,
                                 const mb_sandbox_limits *lim)
{
    sbt_box_init(b, e, name, lim);
    mb_err err = {0};
    int rc = mb_sandbox_create(&b->opts, &b->sb, &err);
    if (rc) fprintf(stderr, "sandbox create failed: %s\n", err.msg);
    return rc;
}

/* Runs `sh -c script` inside; returns mb_sandbox_exec's code. */
static inline int sbt_sh(mb_sandbox *sb, const char *script, int timeout_ms,
                         mb_exec_result *res)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    mb_exec_spec spec = {.argv = argv, .timeout_ms = timeout_ms};
    mb_err err = {0};
    int rc = mb_sandbox_exec(sb, &spec, res, &err);
    if (rc) fprintf(stderr, "exec failed: %s\n", err.msg);
    return rc;
}

/* Writes a file into a workspace from the host, owned by the sandbox's root. */
static inline int sbt_put(const sbt_box *b, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", b->workspace, rel);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    return chown(path, b->opts.uid_base, b->opts.uid_base);
}

#endif /* MB_SANDBOX_TESTLIB_H */
