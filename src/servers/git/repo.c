/*
 * repo.c - opening a repository the way GitPython's Repo(path) does, confining
 * it to the allowed roots, and running git with GitPython's output and error
 * conventions.
 */
#define _GNU_SOURCE
#include "servers/git/repo.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/proc.h"
#include "mcp/mcp.h"
#include "servers/common/pyfmt.h"
#include "servers/terminal/terminal.h"

extern char **environ;

/* Appends s[0..n) with invalid UTF-8 replaced by U+FFFD (GitPython's decoding
 * turned into valid JSON text). */
static void append_repaired(mb_buf *b, const char *s, size_t n)
{
    size_t len;
    char *fixed = mb_utf8_repair(s, n, &len);
    mb_buf_append(b, fixed, len);
    free(fixed);
}

/* str(pathlib.PurePosixPath(p)): duplicate slashes and "." parts dropped, a
 * trailing slash dropped, exactly two leading slashes kept, "" -> ".". */
char *mb_git_pypath(const char *p)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if (p[0] == '/') {
        mb_buf_putc(&b, '/');
        if (p[1] == '/' && p[2] != '/') mb_buf_putc(&b, '/');
    }
    const char *s = p;
    int first = 1;
    while (*s) {
        while (*s == '/') s++;
        const char *e = s;
        while (*e && *e != '/') e++;
        size_t n = (size_t)(e - s);
        if (n && !(n == 1 && s[0] == '.')) {
            if (!first) mb_buf_putc(&b, '/');
            mb_buf_append(&b, s, n);
            first = 0;
        }
        s = e;
    }
    if (!b.len) mb_buf_putc(&b, '.');
    return mb_buf_steal(&b);
}

static char *expanduser(const char *p)
{
    if (p[0] != '~') return mb_strdup(p);
    const char *slash = strchr(p, '/');
    size_t ulen = slash ? (size_t)(slash - p - 1) : strlen(p + 1);
    const char *home = NULL;
    if (ulen == 0) {
        home = getenv("HOME");
        if (!home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
    } else {
        char *user = mb_strndup(p + 1, ulen);
        struct passwd *pw = getpwnam(user);
        free(user);
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home) return mb_strdup(p);
    size_t hl = strlen(home);
    while (hl > 1 && home[hl - 1] == '/') hl--;
    return mb_asprintf("%.*s%s", (int)hl, home, slash ? slash : "");
}

/* os.path.expandvars: $name and ${name} replaced when the variable exists. */
static char *expandvars(const char *p)
{
    if (!strchr(p, '$')) return mb_strdup(p);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *s = p; *s;) {
        if (*s != '$') {
            mb_buf_putc(&b, *s++);
            continue;
        }
        const char *name = s + 1, *end;
        size_t nlen;
        if (*name == '{') {
            end = strchr(name, '}');
            if (!end) {
                mb_buf_putc(&b, *s++);
                continue;
            }
            name++;
            nlen = (size_t)(end - name);
            end++;
        } else {
            end = name;
            while (isalnum((unsigned char)*end) || *end == '_') end++;
            nlen = (size_t)(end - name);
        }
        char *var = mb_strndup(name, nlen);
        const char *val = nlen ? getenv(var) : NULL;
        free(var);
        if (val) {
            mb_buf_puts(&b, val);
            s = end;
        } else {
            mb_buf_putc(&b, *s++);
        }
    }
    return mb_buf_steal(&b);
}

/* posixpath.normpath(abspath(p)) */
static char *abs_norm(const char *p)
{
    char *joined;
    if (p[0] == '/') joined = mb_strdup(p);
    else {
        char cwd[PATH_MAX];
        joined = mb_asprintf("%s/%s", getcwd(cwd, sizeof cwd) ? cwd : "/", p);
    }
    mb_buf b = {0};
    mb_buf_puts(&b, "/");
    char *save = NULL;
    for (char *n = strtok_r(joined, "/", &save); n; n = strtok_r(NULL, "/", &save)) {
        if (!strcmp(n, ".")) continue;
        if (!strcmp(n, "..")) {
            char *slash = strrchr(b.data, '/');
            b.len = slash && slash != b.data ? (size_t)(slash - b.data) : 1;
            b.data[b.len] = '\0';
            continue;
        }
        if (b.len > 1) mb_buf_putc(&b, '/');
        mb_buf_puts(&b, n);
    }
    free(joined);
    return mb_buf_steal(&b);
}

char *mb_git_expand_path(const char *p)
{
    char *u = expanduser(p);
    char *v = expandvars(u);
    char *r = abs_norm(v);
    free(u), free(v);
    return r;
}

static int inside(const char *real, const char *root)
{
    size_t n = strlen(root);
    if (!strcmp(root, "/")) return 1;
    return !strncmp(real, root, n) && (real[n] == '\0' || real[n] == '/');
}

int mb_git_confine(const mb_git_server *g, const char *pypath, mb_buf *errtext)
{
    if (!g->roots || !g->roots[0]) return 0;
    char *exp = mb_git_expand_path(pypath);
    char *real = mb_term_realpath(exp);
    free(exp);
    int ok = 0;
    for (char **r = g->roots; *r && !ok; r++) ok = inside(real, *r);
    free(real);
    if (ok) return 0;
    mb_buf_printf(errtext, "Repository path '%s' is outside the allowed repository '", pypath);
    for (char **r = g->root_args; *r; r++)
        mb_buf_printf(errtext, "%s%s", r == g->root_args ? "" : "', '", *r);
    mb_buf_putc(errtext, '\'');
    return -1;
}

/* GitPython's is_git_dir() */
static int is_git_dir(const char *d)
{
    struct stat st;
    char *p;
    int ok = stat(d, &st) == 0 && S_ISDIR(st.st_mode);
    if (ok) {
        p = mb_asprintf("%s/objects", d);
        ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
        free(p);
    }
    if (ok) {
        p = mb_asprintf("%s/refs", d);
        ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
        free(p);
    }
    if (ok) {
        p = mb_asprintf("%s/HEAD", d);
        ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
    }
    return ok;
}

/* `.git` file of a submodule or worktree: "gitdir: <path>" */
static char *gitfile_target(const char *dotgit)
{
    char *text = NULL;
    size_t len = 0;
    if (mb_read_file(dotgit, 4096, &text, &len, NULL) != MB_OK) return NULL;
    char *r = NULL;
    if (!strncmp(text, "gitdir: ", 8)) {
        char *v = text + 8;
        v[strcspn(v, "\r\n")] = '\0';
        if (v[0] == '/') r = mb_strdup(v);
        else {
            char *dir = mb_strdup(dotgit);
            char *slash = strrchr(dir, '/');
            if (slash) *slash = '\0';
            char *j = mb_asprintf("%s/%s", dir, v);
            r = abs_norm(j);
            free(j), free(dir);
        }
    }
    free(text);
    return r;
}

void mb_git_repo_dispose(mb_git_repo *r)
{
    free(r->epath);
    free(r->work);
    free(r->gitdir);
    memset(r, 0, sizeof *r);
}

int mb_git_repo_open(const char *pypath, mb_git_repo *r, mb_buf *errtext)
{
    memset(r, 0, sizeof *r);
    r->epath = mb_git_expand_path(pypath);
    struct stat st;
    if (stat(r->epath, &st) != 0) {
        mb_buf_puts(errtext, r->epath); /* NoSuchPathError(epath) */
        return -1;
    }
    if (is_git_dir(r->epath)) {
        r->gitdir = mb_strdup(r->epath);
        /* a .git directory given directly: its parent is the working tree unless bare */
        size_t n = strlen(r->epath);
        if (n > 5 && !strcmp(r->epath + n - 5, "/.git")) r->work = mb_strndup(r->epath, n - 5);
        return 0;
    }
    char *dotgit = mb_asprintf("%s/.git", r->epath);
    char *target = NULL;
    if (is_git_dir(dotgit)) {
        r->gitdir = dotgit;
        r->work = mb_strdup(r->epath);
        return 0;
    }
    if ((target = gitfile_target(dotgit)) != NULL) {
        free(dotgit);
        r->gitdir = target;
        r->work = mb_strdup(r->epath);
        return 0;
    }
    free(dotgit);
    mb_buf_puts(errtext, r->epath); /* InvalidGitRepositoryError(epath) */
    return -1;
}

static char **git_env(const char *const *extra)
{
    size_t n = 0, m = 0;
    while (environ[n]) n++;
    while (extra && extra[m]) m++;
    char **env = mb_calloc(n + m + 3, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], "LANGUAGE=", 9) || !strncmp(environ[i], "LC_ALL=", 7)) continue;
        int overridden = 0;
        for (size_t j = 0; j < m; j++) {
            size_t kl = strcspn(extra[j], "=");
            if (!strncmp(environ[i], extra[j], kl + 1)) overridden = 1;
        }
        if (!overridden) env[k++] = mb_strdup(environ[i]);
    }
    /* GitPython runs every git command with these */
    env[k++] = mb_strdup("LANGUAGE=C");
    env[k++] = mb_strdup("LC_ALL=C");
    for (size_t j = 0; j < m; j++) env[k++] = mb_strdup(extra[j]);
    env[k] = NULL;
    return env;
}

static void quote_stream(mb_buf *out, const char *label, const char *s, size_t n)
{
    if (n && s[n - 1] == '\n') n--;
    if (!n) return;
    mb_buf_printf(out, "\n  %s: '", label);
    append_repaired(out, s, n);
    mb_buf_putc(out, '\'');
}

int mb_git_run(const mb_git_server *g, const mb_git_repo *r, const char *const *args,
               const char *const *extra_env, mb_buf *out, mb_buf *errtext)
{
    size_t n = 0;
    while (args[n]) n++;
    const char **argv = mb_calloc(n + 4, sizeof(char *));
    argv[0] = "git";
    argv[1] = "-c";
    argv[2] = "safe.directory=*";
    for (size_t i = 0; i < n; i++) argv[3 + i] = args[i];
    char **env = git_env(extra_env);
    mb_proc_spec spec = {
        .argv = argv,
        .envp = (const char *const *)env,
        .cwd = r ? (r->work ? r->work : r->gitdir) : NULL,
        .timeout_ms = g && g->call_timeout_ms ? g->call_timeout_ms : 120000,
    };
    mb_proc_result res;
    mb_err err = {0};
    int rc = mb_proc_run(&spec, &res, &err);
    for (char **e = env; *e; e++) free(*e);
    free(env);
    mb_buf cmdline = {0};
    mb_buf_puts(&cmdline, "git");
    for (size_t i = 0; i < n; i++) mb_buf_printf(&cmdline, " %s", args[i]);
    free(argv);
    if (rc != MB_OK) {
        mb_buf_printf(errtext, "%s", err.msg);
        mb_buf_free(&cmdline);
        return -1;
    }
    if (res.spawn_errno) {
        mb_buf_printf(errtext,
                      "Cmd('git') not found due to: FileNotFoundError('[Errno %d] %s: 'git'')\n"
                      "  cmdline: %s",
                      res.spawn_errno, strerror(res.spawn_errno), cmdline.data);
        rc = -1;
    } else if (res.timed_out || !res.exited || res.exit_code != 0) {
        if (res.timed_out)
            mb_buf_printf(errtext, "Cmd('git') failed due to: timed out after %d ms",
                          spec.timeout_ms);
        else if (!res.exited)
            mb_buf_printf(errtext, "Cmd('git') failed due to: exit code(%d)", -res.term_signal);
        else mb_buf_printf(errtext, "Cmd('git') failed due to: exit code(%d)", res.exit_code);
        mb_buf_printf(errtext, "\n  cmdline: %s", cmdline.data);
        quote_stream(errtext, "stdout", res.out.data, res.out.len);
        quote_stream(errtext, "stderr", res.err.data, res.err.len);
        rc = -1;
    } else {
        size_t len = res.out.len;
        if (len && res.out.data[len - 1] == '\n') len--; /* GitPython strips one */
        if (out) mb_buf_append(out, res.out.data, len);
        rc = 0;
    }
    mb_buf_free(&cmdline);
    mb_proc_result_free(&res);
    return rc;
}

int mb_git_run_raw(const mb_git_server *g, const mb_git_repo *r, const char *const *args,
                   mb_buf *out)
{
    mb_buf e = {0};
    size_t n = 0;
    while (args[n]) n++;
    const char **argv = mb_calloc(n + 4, sizeof(char *));
    argv[0] = "git";
    argv[1] = "-c";
    argv[2] = "safe.directory=*";
    for (size_t i = 0; i < n; i++) argv[3 + i] = args[i];
    char **env = git_env(NULL);
    mb_proc_spec spec = {
        .argv = argv,
        .envp = (const char *const *)env,
        .cwd = r ? (r->work ? r->work : r->gitdir) : NULL,
        .timeout_ms = g && g->call_timeout_ms ? g->call_timeout_ms : 120000,
    };
    mb_proc_result res;
    int rc = mb_proc_run(&spec, &res, NULL);
    for (char **x = env; *x; x++) free(*x);
    free(env);
    free(argv);
    mb_buf_free(&e);
    if (rc != MB_OK) return -1;
    rc = (res.exited && res.exit_code == 0 && !res.spawn_errno) ? 0 : -1;
    if (rc == 0) mb_buf_append(out, res.out.data, res.out.len);
    mb_proc_result_free(&res);
    return rc;
}
