/*
 * workspace.c - `mcpbox push` and `mcpbox pull`: a sandbox's /data to and
 * from this machine. push packs a directory with the archive layer (or
 * takes a .tar.gz as it is), PUTs it to the signed upload URL and
 * initializes; pull dumps, downloads, and extracts with the archive layer's
 * safe, all-or-nothing extraction (or keeps the .tar.gz).
 */
#define _GNU_SOURCE
#include "archive/archive.h"
#include "cli/cli.h"
#include "cli/client/client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_tarball_name(const char *s)
{
    return mb_str_has_suffix(s, ".tar.gz") || mb_str_has_suffix(s, ".tgz");
}

/* The id operand (resolved) and the optional path after it. */
static int id_and_path(mb_cl *cl, int argc, char **argv, char **id, const char **path)
{
    *path = argc - optind == 2 ? argv[optind + 1] : NULL;
    return mb_cl_resolve_id(cl, argv[optind], id);
}

static void report_skip(void *payload, const char *path, const char *why)
{
    mb_cl *cl = payload;
    mb_cl_fail(cl, 0, "left out of the archive: %s (%s)", path, why);
}

/* An unnamed temporary file in directory dir (O_TMPFILE: nothing to clean
 * up, whatever happens), or from tmpfile() where that is not possible. */
static FILE *temp_in(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return tmpfile();
    FILE *f = fdopen(fd, "w+b");
    if (!f) close(fd);
    return f;
}

/* A temporary file beside path (in the directory that will hold it: the
 * same file system, where the extraction stages too, rather than /tmp,
 * which is often a small tmpfs). */
static FILE *temp_beside(const char *path)
{
    char *copy = mb_strdup(path);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/') copy[--n] = '\0';
    char *slash = strrchr(copy, '/');
    if (slash == copy) slash[1] = '\0';
    else if (slash) *slash = '\0';
    FILE *f = temp_in(slash ? copy : ".");
    free(copy);
    return f;
}

/* The gzip tar of directory dir in a temporary file ($TMPDIR, else /tmp). */
static int pack(mb_cl *cl, const char *dir, FILE **out, mb_archive_stats *st)
{
    const char *tmpdir = getenv("TMPDIR");
    FILE *f = temp_in(tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!f) return mb_cl_fail(cl, MB_CL_FAIL, "cannot make a temporary file: %s", strerror(errno));
    mb_archive_write_opts o = MB_ARCHIVE_WRITE_OPTS_INIT;
    o.on_skip = report_skip;
    o.payload = cl;
    mb_err err = {0};
    if (mb_archive_write_dir(dir, fileno(f), &o, st, &err) != MB_OK) {
        fclose(f);
        return mb_cl_fail(cl, MB_CL_FAIL, "cannot pack %s: %s", dir, err.msg);
    }
    *out = f;
    return MB_CL_OK;
}

int mb_cmd_push(int argc, char **argv)
{
    static const char usage[] =
        "usage: mcpbox push ID DIR|FILE.tar.gz\n"
        "Loads a directory (packed here) or a gzip tar into the sandbox's /data and\n"
        "initializes it: files are added to what /data holds; `mcpbox reset` returns here.\n";
    static const mb_cl_cmd cmd = {"push", usage, NULL, NULL, NULL, 2, 2,
                                  "a sandbox id and a directory or .tar.gz"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    char *id = NULL;
    const char *src = NULL;
    FILE *f = NULL;
    json_t *urls = NULL, *init = NULL;
    mb_archive_stats st = {0};
    int packed = 0;
    rc = id_and_path(&cl, argc, argv, &id, &src);
    if (rc) goto done;
    struct stat sb;
    if (stat(src, &sb) != 0) {
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "cannot read %s: %s", src, strerror(errno));
        goto done;
    }
    if (S_ISDIR(sb.st_mode)) {
        rc = pack(&cl, src, &f, &st);
        packed = 1;
        if (!rc && cl.progress) {
            char b[32];
            mb_cl_human_bytes((double)st.compressed, b);
            fprintf(stderr, "packed %llu entries of %s into %s\n",
                    (unsigned long long)st.entries, src, b);
        }
    } else if (S_ISREG(sb.st_mode)) {
        f = fopen(src, "rb");
        if (!f) rc = mb_cl_fail(&cl, MB_CL_FAIL, "cannot open %s: %s", src, strerror(errno));
    } else {
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "%s is neither a directory nor a .tar.gz file", src);
    }
    if (rc) goto done;
    char *path = mb_asprintf("/local-sandbox/%s/upload-url", id);
    rc = mb_cl_api(&cl, "POST", path, NULL, id, &urls);
    free(path);
    if (rc) goto done;
    const char *upload = mb_cl_str(urls, "upload_url");
    if (!*upload) {
        rc = mb_cl_fail(&cl, MB_CL_FAIL, "the daemon's upload-url answer has no upload_url");
        goto done;
    }
    uint64_t sent = 0;
    rc = mb_cl_upload(&cl, upload, f, &sent);
    if (rc) goto done;
    path = mb_asprintf("/local-sandbox/%s/initialize", id);
    rc = mb_cl_api(&cl, "POST", path, NULL, id, &init);
    free(path);
    if (rc) goto done;
    if (cl.json) {
        json_t *o = json_pack("{s:s, s:I, s:O}", "local_sandbox_id", id, "uploaded_bytes",
                              (json_int_t)sent, "initialize", init);
        if (packed) json_object_set_new(o, "entries", json_integer((json_int_t)st.entries));
        mb_cl_print_json(o);
        json_decref(o);
    } else {
        char b[32];
        mb_cl_human_bytes((double)sent, b);
        char *msg = mb_cl_clean(mb_cl_str(init, "message"), 0);
        printf("pushed %s to %s (%s): %s\n", src, id, b, msg);
        free(msg);
    }
done:
    if (f) fclose(f);
    json_decref(urls);
    json_decref(init);
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}

/* Extracts the archive in f into dir, made if missing (and removed again
 * when the archive is refused). */
static int extract(mb_cl *cl, FILE *f, const char *dir, mb_archive_stats *st)
{
    int made = 0;
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT || mkdir(dir, 0755) != 0)
            return mb_cl_fail(cl, MB_CL_FAIL, "cannot make %s: %s", dir, strerror(errno));
        made = 1;
    } else if (!S_ISDIR(sb.st_mode)) {
        return mb_cl_fail(cl, MB_CL_USAGE, "%s is not a directory (name a directory, or a "
                          "FILE.tar.gz to keep the archive)", dir);
    }
    rewind(f);
    mb_err err = {0};
    int rc = mb_archive_extract(fileno(f), dir, NULL, st, &err);
    if (rc == MB_OK) return MB_CL_OK;
    if (made) rmdir(dir);
    if (rc == MB_ECONFLICT)
        return mb_cl_fail(cl, MB_CL_FAIL, "%s; nothing was changed in %s (pull into an empty "
                          "directory)", err.msg, dir);
    return mb_cl_fail(cl, MB_CL_FAIL, "the workspace archive the daemon sent was refused: %s; "
                      "nothing was written to %s", err.msg, dir);
}

int mb_cmd_pull(int argc, char **argv)
{
    static const char usage[] =
        "usage: mcpbox pull ID [DIR|FILE.tar.gz|-]\n"
        "Dumps the sandbox's /data and extracts it into DIR (made if missing; default ./ID),\n"
        "or keeps the gzip tar as FILE.tar.gz, or writes it to stdout (-).\n";
    static const mb_cl_cmd cmd = {"pull", usage, NULL, NULL, NULL, 1, 2,
                                  "a sandbox id and at most one destination"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    char *id = NULL, *part = NULL;
    const char *dest = NULL;
    json_t *dump = NULL;
    FILE *f = NULL;
    rc = id_and_path(&cl, argc, argv, &id, &dest);
    if (rc) goto done;
    if (!dest) dest = id;
    int to_stdout = !strcmp(dest, "-"), keep = to_stdout || is_tarball_name(dest);
    if (to_stdout) cl.progress = 0;
    char *path = mb_asprintf("/local-sandbox/%s/dump", id);
    rc = mb_cl_api(&cl, "GET", path, NULL, id, &dump);
    free(path);
    if (rc) goto done;
    const char *url = mb_cl_str(dump, "download_url");
    if (!*url) {
        rc = mb_cl_fail(&cl, MB_CL_FAIL, "the daemon's dump answer has no download_url");
        goto done;
    }
    if (to_stdout) {
        f = stdout;
    } else if (keep) {
        part = mb_asprintf("%s.part", dest);
        f = fopen(part, "wbx");
        if (!f && errno == EEXIST && unlink(part) == 0) f = fopen(part, "wbx");
    } else {
        f = temp_beside(dest);
    }
    if (!f) {
        rc = mb_cl_fail(&cl, MB_CL_FAIL, "cannot write %s: %s", part ? part : "a temporary file",
                        strerror(errno));
        goto done;
    }
    uint64_t got = 0;
    rc = mb_cl_download(&cl, url, f, &got);
    mb_archive_stats st = {0};
    if (!rc && part) {
        int closed = fclose(f);
        f = NULL;
        if (closed != 0 || rename(part, dest) != 0)
            rc = mb_cl_fail(&cl, MB_CL_FAIL, "cannot write %s: %s", dest, strerror(errno));
    } else if (!rc && !keep) {
        rc = extract(&cl, f, dest, &st);
    }
    if (!rc && cl.json) {
        char *shown = mb_utf8_repair(dest, strlen(dest), NULL);
        json_t *o = json_pack("{s:s, s:s, s:I}", "local_sandbox_id", id, "path", shown,
                              "downloaded_bytes", (json_int_t)got);
        free(shown);
        if (!keep) {
            json_object_set_new(o, "entries", json_integer((json_int_t)st.entries));
            json_object_set_new(o, "bytes", json_integer((json_int_t)st.bytes));
        }
        mb_cl_print_json(o);
        json_decref(o);
    } else if (!rc && !to_stdout) {
        char b[32];
        mb_cl_human_bytes((double)got, b);
        if (keep) printf("pulled %s into %s (%s)\n", id, dest, b);
        else printf("pulled %s into %s/ (%llu entries, %s)\n", id, dest,
                    (unsigned long long)st.entries, b);
    }
done:
    if (f && f != stdout) fclose(f);
    if (part) {
        if (rc) unlink(part);
        free(part);
    }
    json_decref(dump);
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}
