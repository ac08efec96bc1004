/*
 * ops.c - the git server's tools: what each mcp-server-git handler does, done
 * with the git CLI, printed the way GitPython objects print.
 *
 * Reply conventions (mcp-server-git call_tool):
 *   - a handler's return value is the text of a normal result;
 *   - an exception becomes an isError result whose text is str(exception):
 *     GitCommandError texts, the bare path of NoSuchPathError /
 *     InvalidGitRepositoryError, the bare name of gitdb's BadName, ...
 */
#define _GNU_SOURCE
#include "servers/git/git.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/git/repo.h"

/* ------------------------------------------------------------- helpers */

/* Appends s[0..n) with invalid UTF-8 replaced by U+FFFD (GitPython's decoding
 * turned into valid JSON text). */
static void append_repaired(mb_buf *b, const char *s, size_t n)
{
    size_t len;
    char *fixed = mb_utf8_repair(s, n, &len);
    mb_buf_append(b, fixed, len);
    free(fixed);
}

static const char *arg_str(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* f"{value}" of a JSON number the way Python prints it (int or float). */
static char *num_text(json_t *v, long long dflt)
{
    mb_buf b = {0};
    if (!v || json_is_null(v)) mb_buf_printf(&b, "%lld", dflt);
    else if (json_is_integer(v)) mb_buf_printf(&b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v)) mb_py_float_str(&b, json_real_value(v));
    else mb_py_repr_json(&b, v);
    return mb_buf_steal(&b);
}

static int starts_with_dash(const char *s) { return s && s[0] == '-'; }

/* One commit as GitPython's Commit object exposes it. */
typedef struct commit {
    char *sha, *name, *email, *message;
    long long ts;
    int offset; /* seconds east of UTC */
} commit;

static void commit_free(commit *c)
{
    free(c->sha), free(c->name), free(c->email), free(c->message);
}

#define REC_SEP "\001\002\003"

/* Reads commits with `git log` in raw-date form. `revs` are the arguments that
 * select them. Returns the number read, or -1 with errtext set. */
static long read_commits(const mb_git_server *g, const mb_git_repo *r, const char *const *revs,
                         commit **out, mb_buf *errtext)
{
    const char *args[32];
    size_t n = 0;
    args[n++] = "log";
    args[n++] = "--no-color";
    args[n++] = "--no-show-signature";
    args[n++] = "--date=raw";
    args[n++] = "--format=format:%H%x00%an%x00%ae%x00%ad%x00%B%x00" "%x01%x02%x03";
    for (size_t i = 0; revs[i] && n < 30; i++) args[n++] = revs[i];
    args[n] = NULL;
    mb_buf raw = {0};
    mb_buf_puts(&raw, "");
    if (mb_git_run_raw(g, r, args, &raw) != 0) {
        /* run again for GitPython-style error text */
        mb_git_run(g, r, args, NULL, NULL, errtext);
        mb_buf_free(&raw);
        return -1;
    }
    size_t cap = 16, count = 0;
    commit *v = mb_calloc(cap, sizeof(commit));
    char *p = raw.data, *end = raw.data + raw.len;
    while (p < end) {
        char *rec_end = memmem(p, (size_t)(end - p), REC_SEP, 3);
        if (!rec_end) break;
        while (p < rec_end && *p == '\n') p++;
        char *fields[5];
        char *q = p;
        int nf = 0;
        while (nf < 5 && q < rec_end) {
            char *z = memchr(q, '\0', (size_t)(rec_end - q));
            if (!z) break;
            fields[nf++] = mb_strndup(q, (size_t)(z - q));
            q = z + 1;
        }
        if (nf == 5) {
            if (count == cap) {
                cap *= 2;
                v = mb_realloc(v, cap * sizeof(commit));
            }
            commit *c = &v[count++];
            c->sha = fields[0], c->name = fields[1], c->email = fields[2];
            c->message = fields[4];
            long long ts = 0;
            char sign = '+';
            int hh = 0, mm = 0;
            if (sscanf(fields[3], "%lld %c%2d%2d", &ts, &sign, &hh, &mm) >= 1) {
                c->ts = ts;
                c->offset = (sign == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
            }
            free(fields[3]);
        } else {
            for (int i = 0; i < nf; i++) free(fields[i]);
        }
        p = rec_end + 3;
    }
    mb_buf_free(&raw);
    *out = v;
    return (long)count;
}

/* str(datetime) with a fixed offset: "2024-04-03 15:39:04+02:00" */
static void put_datetime(mb_buf *b, const commit *c, int as_repr)
{
    time_t t = (time_t)(c->ts + c->offset);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (!as_repr) {
        int off = c->offset < 0 ? -c->offset : c->offset;
        mb_buf_printf(b, "%04d-%02d-%02d %02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                      c->offset < 0 ? '-' : '+', off / 3600, (off % 3600) / 60);
        return;
    }
    /* repr(datetime): trailing zero second is dropped (microsecond always 0);
     * GitPython's tzoffset has no __repr__, so object.__repr__ with an address */
    mb_buf_printf(b, "datetime.datetime(%d, %d, %d, %d, %d", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min);
    if (tm.tm_sec) mb_buf_printf(b, ", %d", tm.tm_sec);
    unsigned long long h = mb_hash_str(c->sha);
    mb_buf_printf(b, ", tzinfo=<git.objects.util.tzoffset object at 0x7f%08llx0>)",
                  (h >> 8) & 0xffffffffULL);
}

/* The "Commit:/Author:/Date:/Message:" block of git_log and git_show. */
static void put_commit_header(mb_buf *b, const commit *c, mb_git_version v, int date_repr)
{
    if (v == MB_GIT_2025_1_14) {
        mb_buf_printf(b, "Commit: %s\nAuthor: %s\nDate: ", c->sha, c->name);
        put_datetime(b, c, 0);
        mb_buf_puts(b, "\nMessage: ");
        mb_buf_puts(b, c->message);
        mb_buf_puts(b, "\n");
        return;
    }
    mb_buf_puts(b, "Commit: ");
    mb_py_repr_str(b, c->sha, strlen(c->sha));
    mb_buf_printf(b, "\nAuthor: <git.Actor \"%s <%s>\">\nDate: ", c->name, c->email);
    put_datetime(b, c, date_repr);
    mb_buf_puts(b, "\nMessage: ");
    mb_py_repr_str(b, c->message, strlen(c->message));
    mb_buf_puts(b, "\n");
}

/* ValueError of repo.head.commit on an unborn branch. */
static int unborn_error(const mb_git_server *g, const mb_git_repo *r, mb_buf *text)
{
    mb_buf ref = {0};
    const char *args[] = {"symbolic-ref", "-q", "HEAD", NULL};
    mb_buf_puts(&ref, "");
    if (mb_git_run_raw(g, r, args, &ref) == 0) {
        if (ref.len && ref.data[ref.len - 1] == '\n') ref.data[--ref.len] = '\0';
        mb_buf_printf(text, "Reference at '%s' does not exist", ref.data);
    } else {
        mb_buf_puts(text, "Reference at 'HEAD' does not exist");
    }
    mb_buf_free(&ref);
    return 1;
}

static int resolve(const mb_git_server *g, const mb_git_repo *r, const char *rev, char *sha_out)
{
    mb_buf out = {0};
    char *spec = mb_asprintf("%s^{commit}", rev);
    const char *args[] = {"rev-parse", "--verify", "-q", "--end-of-options", spec, NULL};
    mb_buf_puts(&out, "");
    int rc = mb_git_run_raw(g, r, args, &out);
    free(spec);
    if (rc == 0 && out.len >= 40) {
        memcpy(sha_out, out.data, 40);
        sha_out[40] = '\0';
    } else {
        rc = -1;
    }
    mb_buf_free(&out);
    return rc;
}

/* ---------------------------------------------------------------- tools */

static int tool_diff(const mb_git_server *g, const mb_git_repo *r, const char *label,
                     const char *extra, const char *target, json_t *args, mb_buf *text)
{
    const char *argv[6];
    size_t n = 0;
    char *unified = NULL;
    argv[n++] = "diff";
    if (g->version == MB_GIT_2025_7_1) {
        char *ctx = num_text(json_object_get(args, "context_lines"), 3);
        unified = mb_asprintf("--unified=%s", ctx);
        free(ctx);
        argv[n++] = unified;
    }
    if (extra) argv[n++] = extra;
    if (target) argv[n++] = target;
    argv[n] = NULL;
    mb_buf out = {0}, err = {0};
    mb_buf_puts(&out, "");
    int rc = mb_git_run(g, r, argv, NULL, &out, &err);
    free(unified);
    if (rc == 0) {
        mb_buf_puts(text, label);
        append_repaired(text, out.data, out.len);
    } else {
        mb_buf_append(text, err.data, err.len);
    }
    mb_buf_free(&out), mb_buf_free(&err);
    return rc ? 1 : 0;
}

static int tool_status(const mb_git_server *g, const mb_git_repo *r, mb_buf *text)
{
    const char *argv[] = {"status", NULL};
    mb_buf out = {0}, err = {0};
    mb_buf_puts(&out, "");
    int rc = mb_git_run(g, r, argv, NULL, &out, &err);
    if (rc == 0) {
        mb_buf_puts(text, "Repository status:\n");
        append_repaired(text, out.data, out.len);
    } else {
        mb_buf_append(text, err.data, err.len);
    }
    mb_buf_free(&out), mb_buf_free(&err);
    return rc ? 1 : 0;
}

/* GitPython's Actor defaults: env, then config, then user@host. */
static char *identity(const mb_git_server *g, const mb_git_repo *r, const char *who,
                      const char *what)
{
    char env_name[64];
    snprintf(env_name, sizeof env_name, "GIT_%s_%s", who, what);
    const char *v = getenv(env_name);
    if (v) return mb_strdup(v);
    mb_buf out = {0};
    mb_buf_puts(&out, "");
    const char *args[] = {"config", "--get", !strcmp(what, "NAME") ? "user.name" : "user.email",
                          NULL};
    if (mb_git_run_raw(g, r, args, &out) == 0 && out.len) {
        if (out.data[out.len - 1] == '\n') out.data[--out.len] = '\0';
        return mb_buf_steal(&out);
    }
    mb_buf_free(&out);
    const char *user = getenv("LOGNAME");
    if (!user) user = getenv("USER");
    struct passwd *pw = user ? NULL : getpwuid(getuid());
    if (!user) user = pw ? pw->pw_name : "root";
    if (!strcmp(what, "NAME")) return mb_strdup(user);
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    return mb_asprintf("%s@%s", user, host);
}

static int tool_commit(const mb_git_server *g, const mb_git_repo *r, const char *message,
                       mb_buf *text)
{
    int rc = 1;
    mb_buf tree = {0}, head = {0}, sha = {0}, err = {0};
    char *env[5] = {0};
    char msgpath[] = "/tmp/mb-git-msg-XXXXXX";
    int fd = -1;
    mb_buf_puts(&tree, ""), mb_buf_puts(&head, ""), mb_buf_puts(&sha, "");
    const char *wt[] = {"write-tree", NULL};
    if (mb_git_run(g, r, wt, NULL, &tree, &err) != 0) {
        mb_buf_append(text, err.data, err.len);
        goto out;
    }
    const char *rp[] = {"rev-parse", "-q", "--verify", "HEAD^{commit}", NULL};
    int have_head = mb_git_run_raw(g, r, rp, &head) == 0 && head.len >= 40;
    if (have_head) head.data[40] = '\0';

    fd = mkstemp(msgpath);
    if (fd < 0 || write(fd, message, strlen(message)) != (ssize_t)strlen(message)) {
        mb_buf_printf(text, "[Errno %d] %s", errno, strerror(errno));
        goto out;
    }
    const char *who[2] = {"AUTHOR", "COMMITTER"};
    for (int i = 0; i < 2; i++) {
        char *name = identity(g, r, who[i], "NAME"), *email = identity(g, r, who[i], "EMAIL");
        env[i * 2] = mb_asprintf("GIT_%s_NAME=%s", who[i], name);
        env[i * 2 + 1] = mb_asprintf("GIT_%s_EMAIL=%s", who[i], email);
        free(name), free(email);
    }
    const char *ct[8];
    size_t n = 0;
    ct[n++] = "commit-tree";
    ct[n++] = tree.data;
    if (have_head) ct[n++] = "-p", ct[n++] = head.data;
    ct[n++] = "-F";
    ct[n++] = msgpath;
    ct[n] = NULL;
    if (mb_git_run(g, r, ct, (const char *const *)env, &sha, &err) != 0) {
        mb_buf_append(text, err.data, err.len);
        goto out;
    }
    char first[200];
    snprintf(first, sizeof first, "commit%s: %.*s", have_head ? "" : " (initial)",
             (int)strcspn(message, "\n"), message);
    const char *ur[] = {"update-ref", "-m", first, "HEAD", sha.data, NULL};
    if (mb_git_run(g, r, ur, NULL, NULL, &err) != 0) {
        mb_buf_append(text, err.data, err.len);
        goto out;
    }
    mb_buf_printf(text, "Changes committed successfully with hash %s", sha.data);
    rc = 0;
out:
    if (fd >= 0) close(fd), unlink(msgpath);
    for (int i = 0; i < 4; i++) free(env[i]);
    mb_buf_free(&tree), mb_buf_free(&head), mb_buf_free(&sha), mb_buf_free(&err);
    return rc;
}

static int tool_add(const mb_git_server *g, const mb_git_repo *r, json_t *files, mb_buf *text)
{
    size_t n = json_array_size(files);
    int dot = n == 1 && !strcmp(json_string_value(json_array_get(files, 0)), ".");
    const char **argv = mb_calloc(n + 5, sizeof(char *));
    size_t k = 0;
    argv[k++] = "add";
    if (!dot) argv[k++] = "-f"; /* GitPython's index.add ignores .gitignore */
    argv[k++] = "--";
    for (size_t i = 0; i < n; i++) {
        const char *f = json_string_value(json_array_get(files, i));
        if (!dot) {
            if (f[0] == '/') {
                if (!r->work || strncmp(f, r->work, strlen(r->work)) != 0) {
                    mb_buf puts = {0};
                    mb_py_repr_str(&puts, f, strlen(f));
                    mb_buf_printf(text, "Absolute path %s is not in git repository at ", puts.data);
                    mb_buf_reset(&puts);
                    const char *w = r->work ? r->work : "None";
                    mb_py_repr_str(&puts, w, strlen(w));
                    mb_buf_append(text, puts.data, puts.len);
                    mb_buf_free(&puts);
                    free(argv);
                    return 1;
                }
            }
            char *p = f[0] == '/' ? mb_strdup(f) : mb_asprintf("%s/%s", r->work ? r->work : ".", f);
            struct stat st;
            int missing = lstat(p, &st) != 0 && !strpbrk(f, "*?[");
            free(p);
            if (missing) {
                mb_buf_puts(text, "[Errno 2] No such file or directory: ");
                mb_py_repr_str(text, f, strlen(f));
                free(argv);
                return 1;
            }
        }
        argv[k++] = f;
    }
    argv[k] = NULL;
    mb_buf err = {0};
    int rc = mb_git_run(g, r, argv, NULL, NULL, &err);
    free(argv);
    if (rc == 0) mb_buf_puts(text, "Files staged successfully");
    else mb_buf_append(text, err.data, err.len);
    mb_buf_free(&err);
    return rc ? 1 : 0;
}

static int tool_reset(const mb_git_server *g, const mb_git_repo *r, mb_buf *text)
{
    char sha[41];
    mb_buf err = {0};
    int rc;
    if (resolve(g, r, "HEAD", sha) != 0) {
        /* what IndexFile.reset's read-tree reports on an unborn branch */
        const char *rt[] = {"read-tree", "HEAD", NULL};
        rc = mb_git_run(g, r, rt, NULL, NULL, &err);
    } else {
        const char *rs[] = {"reset", "-q", NULL};
        rc = mb_git_run(g, r, rs, NULL, NULL, &err);
    }
    if (rc == 0) mb_buf_puts(text, "All staged changes reset");
    else mb_buf_append(text, err.data, err.len);
    mb_buf_free(&err);
    return rc ? 1 : 0;
}

static int tool_log(const mb_git_server *g, const mb_git_repo *r, json_t *args, mb_buf *text)
{
    char head[41];
    if (resolve(g, r, "HEAD", head) != 0) return unborn_error(g, r, text);
    char *mc = num_text(json_object_get(args, "max_count"), 10);
    char *max = mb_asprintf("--max-count=%s", mc);
    free(mc);
    const char *revs[] = {max, head, "--", NULL};
    commit *cs = NULL;
    mb_buf err = {0};
    long n = read_commits(g, r, revs, &cs, &err);
    free(max);
    if (n < 0) {
        mb_buf_append(text, err.data, err.len);
        mb_buf_free(&err);
        return 1;
    }
    mb_buf_puts(text, "Commit history:\n");
    for (long i = 0; i < n; i++) {
        if (i) mb_buf_puts(text, "\n");
        put_commit_header(text, &cs[i], g->version, 0);
        commit_free(&cs[i]);
    }
    free(cs);
    mb_buf_free(&err);
    return 0;
}

/* Decodes a path from a diff header as GitPython's decode_path does; NULL for
 * /dev/null. `prefixed`: strip the a/ or b/ prefix. */
static char *decode_diff_path(const char *s, size_t n, int prefixed)
{
    if (n == 9 && !memcmp(s, "/dev/null", 9)) return NULL;
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        for (size_t i = 1; i + 1 < n; i++) {
            if (s[i] == '\\' && i + 2 < n) {
                char c = s[i + 1];
                if (c >= '0' && c <= '7' && i + 3 < n) {
                    int v = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
                    mb_buf_putc(&b, (char)v);
                    i += 3;
                    continue;
                }
                mb_buf_putc(&b, c == 'n' ? '\n' : c == 't' ? '\t' : c);
                i++;
                continue;
            }
            mb_buf_putc(&b, s[i]);
        }
    } else {
        mb_buf_append(&b, s, n);
    }
    if (prefixed && b.len >= 2 && (b.data[0] == 'a' || b.data[0] == 'b') && b.data[1] == '/')
        mb_buf_consume(&b, 2);
    return mb_buf_steal(&b);
}

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

static int has_prefix(const char *p, const char *end, const char *pre)
{
    size_t n = strlen(pre);
    return (size_t)(end - p) >= n && !memcmp(p, pre, n);
}

/* Appends "\n--- a\n+++ b\n<diff>" for every file in a `git diff-tree -p`
 * output, as mcp-server-git prints GitPython's Diff objects. Returns -1 (with
 * the UnicodeDecodeError text) when a diff body is not valid UTF-8. */
static int put_patches(mb_buf *text, const char *p, const char *end)
{
    const char *hdr = NULL;
    /* find the first header */
    while (p < end && !has_prefix(p, end, "diff --git ")) p = line_end(p, end);
    while (p < end) {
        hdr = p;
        const char *l1e = line_end(p, end);
        /* a_path_fallback / b_path_fallback from "diff --git a/x b/y" */
        const char *names = p + 11, *names_end = l1e > names && l1e[-1] == '\n' ? l1e - 1 : l1e;
        char *a_fb = NULL, *b_fb = NULL;
        for (const char *s = names + 1; s + 3 <= names_end; s++) {
            if (s[0] == ' ' && (s[1] == 'a' || s[1] == 'b' || s[1] == '"') &&
                (s[2] == '/' || s[1] == '"')) {
                a_fb = decode_diff_path(names, (size_t)(s - names), 1);
                b_fb = decode_diff_path(s + 1, (size_t)(names_end - s - 1), 1);
                break;
            }
        }
        p = l1e;
        char *rename_from = NULL, *rename_to = NULL, *a_path = NULL, *b_path = NULL;
        int have_a = 0, have_b = 0;
        static const char *const hdr_lines[] = {
            "old mode ",   "new mode ", "similarity index ", "rename from ", "rename to ",
            "new file mode ", "deleted file mode ", "copy from ", "copy to ", "index ",
            "dissimilarity index ",
        };
        for (;;) {
            int matched = 0;
            for (size_t i = 0; i < sizeof hdr_lines / sizeof hdr_lines[0]; i++) {
                if (has_prefix(p, end, hdr_lines[i])) {
                    const char *le = line_end(p, end);
                    size_t off = strlen(hdr_lines[i]);
                    size_t vlen = (size_t)(le - p) - off - (le[-1] == '\n');
                    if (i == 3) rename_from = mb_strndup(p + off, vlen);
                    if (i == 4) rename_to = mb_strndup(p + off, vlen);
                    p = le;
                    matched = 1;
                    break;
                }
            }
            if (!matched) break;
        }
        if (has_prefix(p, end, "--- ")) {
            const char *le = line_end(p, end);
            size_t vlen = strcspn(p + 4, "\t\n\r\f\v");
            if (p + 4 + vlen > le) vlen = (size_t)(le - p - 4);
            a_path = decode_diff_path(p + 4, vlen, 1);
            have_a = 1;
            p = le;
        }
        if (has_prefix(p, end, "+++ ")) {
            const char *le = line_end(p, end);
            size_t vlen = strcspn(p + 4, "\t\n\r\f\v");
            if (p + 4 + vlen > le) vlen = (size_t)(le - p - 4);
            b_path = decode_diff_path(p + 4, vlen, 1);
            have_b = 1;
            p = le;
        }
        /* _pick_best_path: the ---/+++ line, else rename, else the diff --git names */
        const char *a = have_a ? a_path : rename_from ? rename_from : a_fb;
        const char *b = have_b ? b_path : rename_to ? rename_to : b_fb;
        const char *body = p;
        while (p < end && !has_prefix(p, end, "diff --git ")) p = line_end(p, end);
        mb_buf tmp = {0};
        long bad = mb_py_utf8_error(&tmp, body, (size_t)(p - body));
        if (bad >= 0) {
            mb_buf_reset(text);
            mb_buf_append(text, tmp.data, tmp.len);
        } else {
            mb_buf_printf(text, "\n--- %s\n+++ %s\n", a ? a : "None", b ? b : "None");
            mb_buf_append(text, body, (size_t)(p - body));
        }
        mb_buf_free(&tmp);
        free(a_fb), free(b_fb), free(rename_from), free(rename_to), free(a_path), free(b_path);
        if (bad >= 0) return -1;
    }
    (void)hdr;
    return 0;
}

static int tool_show(const mb_git_server *g, const mb_git_repo *r, const char *revision,
                     mb_buf *text)
{
    char sha[41];
    if (resolve(g, r, revision, sha) != 0) {
        mb_buf_puts(text, revision); /* str(gitdb.exc.BadName(name)) */
        return 1;
    }
    const char *revs[] = {"-1", sha, "--", NULL};
    commit *cs = NULL;
    mb_buf err = {0};
    long n = read_commits(g, r, revs, &cs, &err);
    if (n < 1) {
        mb_buf_append(text, err.data, err.len);
        mb_buf_free(&err);
        free(cs);
        return 1;
    }
    mb_buf hdr = {0};
    mb_buf_puts(&hdr, "");
    put_commit_header(&hdr, &cs[0], g->version, 1);
    for (long i = 0; i < n; i++) commit_free(&cs[i]);
    free(cs);

    /* first parent, or the root commit against the empty tree */
    mb_buf parents = {0};
    mb_buf_puts(&parents, "");
    char *first_parent = mb_asprintf("%s^1", sha);
    char psha[41];
    int has_parent = resolve(g, r, first_parent, psha) == 0;
    free(first_parent);
    const char *dt_parent[] = {"diff-tree", psha,           sha,        "-r",
                               "--abbrev=40", "--full-index", "-M",      "-p",
                               "--no-ext-diff", "--no-color", NULL};
    const char *dt_root[] = {"diff-tree",     sha,          "--root",     "-r",
                             "--abbrev=40",   "--full-index", "-M",       "-p",
                             "--no-ext-diff", "--no-color", NULL};
    mb_buf patch = {0};
    mb_buf_puts(&patch, "");
    int rc = mb_git_run_raw(g, r, has_parent ? dt_parent : dt_root, &patch);
    if (rc != 0) {
        mb_git_run(g, r, has_parent ? dt_parent : dt_root, NULL, NULL, text);
        rc = 1;
    } else {
        mb_buf body = {0};
        mb_buf_puts(&body, "");
        if (put_patches(&body, patch.data, patch.data + patch.len) != 0) {
            mb_buf_append(text, body.data, body.len);
            rc = 1;
        } else {
            mb_buf_append(text, hdr.data, hdr.len);
            mb_buf_append(text, body.data, body.len);
            rc = 0;
        }
        mb_buf_free(&body);
    }
    mb_buf_free(&patch), mb_buf_free(&parents), mb_buf_free(&hdr), mb_buf_free(&err);
    return rc;
}

/* repo.references[name]: heads, tags, remotes by short name, others by path
 * below refs/. Returns the full ref or NULL. */
static char *find_reference(const mb_git_server *g, const mb_git_repo *r, const char *name)
{
    mb_buf out = {0};
    mb_buf_puts(&out, "");
    const char *args[] = {"for-each-ref", "--format=%(refname)", NULL};
    char *found = NULL;
    if (mb_git_run_raw(g, r, args, &out) == 0) {
        char *save = NULL;
        for (char *l = strtok_r(out.data, "\n", &save); l && !found;
             l = strtok_r(NULL, "\n", &save)) {
            const char *shortname = l;
            const char *pre[] = {"refs/heads/", "refs/tags/", "refs/remotes/", "refs/"};
            for (size_t i = 0; i < 4; i++)
                if (!strncmp(l, pre[i], strlen(pre[i]))) {
                    shortname = l + strlen(pre[i]);
                    break;
                }
            if (!strcmp(shortname, name)) found = mb_strdup(l);
        }
    }
    mb_buf_free(&out);
    return found;
}

static int tool_create_branch(const mb_git_server *g, const mb_git_repo *r, const char *branch,
                              const char *base_name, mb_buf *text)
{
    if (starts_with_dash(branch)) {
        mb_buf_printf(text, "Invalid branch name: '%s' - cannot start with '-'", branch);
        return 1;
    }
    if (starts_with_dash(base_name)) {
        mb_buf_printf(text, "Invalid base branch: '%s' - cannot start with '-'", base_name);
        return 1;
    }
    char *base_ref = NULL, *base_short = NULL;
    if (base_name && *base_name) {
        base_ref = find_reference(g, r, base_name);
        if (!base_ref) {
            mb_buf_puts(text, "No item found with id ");
            mb_py_repr_str(text, base_name, strlen(base_name));
            return 1;
        }
        base_short = mb_strdup(base_name);
    } else {
        mb_buf ref = {0};
        mb_buf_puts(&ref, "");
        const char *sr[] = {"symbolic-ref", "-q", "HEAD", NULL};
        if (mb_git_run_raw(g, r, sr, &ref) != 0) {
            char sha[41] = "";
            resolve(g, r, "HEAD", sha);
            mb_buf_printf(text, "HEAD is a detached symbolic reference as it points to '%s'", sha);
            mb_buf_free(&ref);
            return 1;
        }
        if (ref.len && ref.data[ref.len - 1] == '\n') ref.data[--ref.len] = '\0';
        base_ref = mb_buf_steal(&ref);
        base_short = mb_strdup(!strncmp(base_ref, "refs/heads/", 11) ? base_ref + 11 : base_ref);
    }
    int rc = 1;
    char sha[41];
    char *full = mb_asprintf("refs/heads/%s", branch);
    if (resolve(g, r, base_ref, sha) != 0) {
        mb_buf_printf(text, "Reference at '%s' does not exist", base_ref);
        goto out;
    }
    /* SymbolicReference._create: an existing loose ref must already point there */
    char *loose = mb_asprintf("%s/%s", r->gitdir, full);
    char *existing = NULL;
    size_t elen = 0;
    if (mb_read_file(loose, 4096, &existing, &elen, NULL) == MB_OK) {
        while (elen && (existing[elen - 1] == '\n' || existing[elen - 1] == ' ')) existing[--elen] = 0;
        if (strcmp(existing, sha) != 0) {
            mb_buf_printf(text,
                          "Reference at '%s' does already exist, pointing to '%s', requested was '%s'",
                          full, existing, sha);
            free(existing), free(loose);
            goto out;
        }
    }
    free(existing), free(loose);
    mb_buf err = {0};
    char *msg = mb_asprintf("branch: Created from %s", base_short);
    const char *ur[] = {"update-ref", "-m", msg, full, sha, NULL};
    if (mb_git_run(g, r, ur, NULL, NULL, &err) != 0) {
        mb_buf_append(text, err.data, err.len);
    } else {
        mb_buf_printf(text, "Created branch '%s' from '%s'", branch, base_short);
        rc = 0;
    }
    free(msg);
    mb_buf_free(&err);
out:
    free(full), free(base_ref), free(base_short);
    return rc;
}

static int tool_checkout(const mb_git_server *g, const mb_git_repo *r, const char *branch,
                         mb_buf *text)
{
    if (starts_with_dash(branch)) {
        mb_buf_printf(text, "Invalid branch name: '%s' - cannot start with '-'", branch);
        return 1;
    }
    const char *argv[] = {"checkout", branch, NULL};
    mb_buf err = {0};
    int rc = mb_git_run(g, r, argv, NULL, NULL, &err);
    if (rc == 0) mb_buf_printf(text, "Switched to branch '%s'", branch);
    else mb_buf_append(text, err.data, err.len);
    mb_buf_free(&err);
    return rc ? 1 : 0;
}

static int tool_branch(const mb_git_server *g, const mb_git_repo *r, json_t *args, mb_buf *text)
{
    const char *type = arg_str(args, "branch_type");
    const char *contains = arg_str(args, "contains");
    const char *not_contains = arg_str(args, "not_contains");
    const char *argv[8];
    size_t n = 0;
    argv[n++] = "branch";
    if (!type) type = "local";
    if (!strcmp(type, "remote")) argv[n++] = "-r";
    else if (!strcmp(type, "all")) argv[n++] = "-a";
    else if (strcmp(type, "local") != 0) {
        mb_buf_printf(text, "Invalid branch type: %s", type);
        return 0;
    }
    if (starts_with_dash(contains) || starts_with_dash(not_contains)) {
        mb_buf_printf(text, "Invalid commit sha: '%s' - cannot start with '-'",
                      starts_with_dash(contains) ? contains : not_contains);
        return 1;
    }
    if (contains) argv[n++] = "--contains", argv[n++] = contains;
    if (not_contains) argv[n++] = "--no-contains", argv[n++] = not_contains;
    argv[n] = NULL;
    mb_buf out = {0}, err = {0};
    mb_buf_puts(&out, "");
    int rc = mb_git_run(g, r, argv, NULL, &out, &err);
    if (rc == 0) append_repaired(text, out.data, out.len);
    else mb_buf_append(text, err.data, err.len);
    mb_buf_free(&out), mb_buf_free(&err);
    return rc ? 1 : 0;
}

/* Repo.init(path, mkdir=True) wrapped in upstream's try/except: failures are
 * reported as text, not as an error result. */
static int tool_init(const mb_git_server *g, const char *pypath, mb_buf *text)
{
    char *epath = mb_git_expand_path(pypath);
    struct stat st;
    mb_err err = {0};
    if (stat(epath, &st) != 0 && mb_mkdir_p(epath, 0755, &err) != MB_OK) {
        mb_buf_printf(text, "Error initializing repository: [Errno %d] %s: ", errno,
                      strerror(errno));
        mb_py_repr_str(text, epath, strlen(epath));
        free(epath);
        return 0;
    }
    if (stat(epath, &st) == 0 && !S_ISDIR(st.st_mode)) {
        mb_buf_puts(text, "Error initializing repository: [Errno 20] Not a directory: ");
        mb_py_repr_str(text, epath, strlen(epath));
        free(epath);
        return 0;
    }
    mb_git_repo r = {.work = epath};
    const char *argv[] = {"init", NULL};
    mb_buf e = {0};
    if (mb_git_run(g, &r, argv, NULL, NULL, &e) != 0)
        mb_buf_printf(text, "Error initializing repository: %s", e.data);
    else mb_buf_printf(text, "Initialized empty Git repository in %s/.git",
                       strcmp(epath, "/") ? epath : "");
    mb_buf_free(&e);
    free(epath);
    return 0;
}

int mb_git_call(const mb_git_server *g, const char *name, json_t *args, mb_buf *text)
{
    size_t ntools;
    const mb_git_tool *tools = mb_git_tools(g->version, &ntools);
    int known = 0;
    for (size_t i = 0; i < ntools; i++)
        if (!strcmp(tools[i].name, name)) known = 1;
    const char *repo_arg = arg_str(args, "repo_path");
    if (!repo_arg) {
        mb_buf_puts(text, "'repo_path'"); /* KeyError */
        return 1;
    }
    char *pypath = mb_git_pypath(repo_arg);
    int rc = 1;
    mb_git_repo r = {0};
    if (mb_git_confine(g, pypath, text) != 0) goto out;
    if (known && !strcmp(name, "git_init")) {
        rc = tool_init(g, pypath, text);
        goto out;
    }
    if (mb_git_repo_open(pypath, &r, text) != 0) goto out;
    if (!known) {
        mb_buf_printf(text, "Unknown tool: %s", name);
        goto out;
    }
    if (!strcmp(name, "git_status")) rc = tool_status(g, &r, text);
    else if (!strcmp(name, "git_diff_unstaged"))
        rc = tool_diff(g, &r, "Unstaged changes:\n", NULL, NULL, args, text);
    else if (!strcmp(name, "git_diff_staged"))
        rc = tool_diff(g, &r, "Staged changes:\n", "--cached", NULL, args, text);
    else if (!strcmp(name, "git_diff")) {
        const char *target = arg_str(args, "target");
        if (starts_with_dash(target)) {
            mb_buf_printf(text, "Invalid target: '%s' - cannot start with '-'", target);
            goto out;
        }
        char *label = mb_asprintf("Diff with %s:\n", target);
        rc = tool_diff(g, &r, label, NULL, target, args, text);
        free(label);
    } else if (!strcmp(name, "git_commit")) rc = tool_commit(g, &r, arg_str(args, "message"), text);
    else if (!strcmp(name, "git_add")) rc = tool_add(g, &r, json_object_get(args, "files"), text);
    else if (!strcmp(name, "git_reset")) rc = tool_reset(g, &r, text);
    else if (!strcmp(name, "git_log")) rc = tool_log(g, &r, args, text);
    else if (!strcmp(name, "git_create_branch"))
        rc = tool_create_branch(g, &r, arg_str(args, "branch_name"), arg_str(args, "base_branch"),
                                text);
    else if (!strcmp(name, "git_checkout"))
        rc = tool_checkout(g, &r, arg_str(args, "branch_name"), text);
    else if (!strcmp(name, "git_show")) rc = tool_show(g, &r, arg_str(args, "revision"), text);
    else if (!strcmp(name, "git_branch")) rc = tool_branch(g, &r, args, text);
out:
    mb_git_repo_dispose(&r);
    free(pypath);
    return rc;
}
