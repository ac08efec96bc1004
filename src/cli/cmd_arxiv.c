/*
 * cmd_arxiv.c - `mcpbox arxiv`: builds and inspects the offline catalog the
 * arxiv server reads.
 *
 *   mcpbox arxiv import --catalog DIR [--metadata FILE.jsonl]... [--pdf-dir D]...
 *                       [--md-dir D]... [--link] [--quiet]
 *   mcpbox arxiv search --catalog DIR [--max N] QUERY
 *   mcpbox arxiv stats  --catalog DIR
 *
 * Metadata is the public arXiv snapshot format (Kaggle "Cornell-University/
 * arxiv", one JSON object per line, "-" = stdin). PDF and markdown
 * directories are walked recursively; a file is named after its paper:
 * 2107.05580v2.pdf, 2107.05580.md (the latest version), hep-th_9901001v1.pdf
 * or hep-th/9901001v1.pdf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "servers/arxiv/arxiv.h"

#define BATCH 20000
#define MAX_LINE ((size_t)16 << 20)

typedef struct import_opts {
    const char *catalog;
    const char **metadata, **pdf_dirs, **md_dirs;
    size_t n_metadata, n_pdf, n_md;
    int link, quiet;
} import_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox arxiv import --catalog DIR [--metadata FILE.jsonl]... [--pdf-dir DIR]...\n"
            "                           [--md-dir DIR]... [--link] [--quiet]\n"
            "       mcpbox arxiv search --catalog DIR [--max N] QUERY\n"
            "       mcpbox arxiv stats --catalog DIR\n"
            "\n"
            "  --metadata FILE  arXiv metadata as JSON lines (the Kaggle/OAI snapshot format;\n"
            "                   '-' reads stdin); papers already present are replaced\n"
            "  --pdf-dir DIR    PDFs named <id>[vN].pdf (old-style ids with '_' or '/')\n"
            "  --md-dir DIR     pre-converted markdown named <id>[vN].md\n"
            "  --link           hard-link files into the catalog instead of copying them\n");
}

static void progress(const import_opts *o, const char *what, long done, long skipped,
                     double started, int final)
{
    if (o->quiet) return;
    double el = (double)mb_mono_ms() / 1000.0 - started;
    fprintf(stderr, "%s%s: %ld imported, %ld skipped, %.1f s (%.0f/s)%s", isatty(2) ? "\r" : "",
            what, done, skipped, el, el > 0 ? (double)done / el : 0.0,
            final || !isatty(2) ? "\n" : "");
    fflush(stderr);
}

static int import_metadata(mb_arxiv_catalog *c, const import_opts *o, const char *path,
                           long *total)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
    if (!f) {
        fprintf(stderr, "mcpbox arxiv: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long done = 0, skipped = 0, lineno = 0;
    double started = (double)mb_mono_ms() / 1000.0;
    mb_err err = {0};
    int rc = 0, in_tx = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (!in_tx) {
            if (mb_arxiv_catalog_begin(c, &err)) {
                rc = 1;
                break;
            }
            in_tx = 1;
        }
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
        if (n == 0) continue;
        if ((size_t)n > MAX_LINE) {
            skipped++;
            continue;
        }
        json_error_t jerr;
        json_t *rec = json_loadb(line, (size_t)n, 0, &jerr);
        mb_arxiv_paper p;
        if (!rec || mb_arxiv_paper_from_snapshot(rec, &p, &err) != MB_OK) {
            if (skipped < 5 && !o->quiet)
                fprintf(stderr, "\nmcpbox arxiv: %s:%ld: skipped: %s\n", path, lineno,
                        rec ? err.msg : jerr.text);
            skipped++;
            json_decref(rec);
            continue;
        }
        json_decref(rec);
        if (mb_arxiv_catalog_put(c, &p, &err) != MB_OK) {
            if (skipped < 5) fprintf(stderr, "\nmcpbox arxiv: %s:%ld: %s\n", path, lineno, err.msg);
            skipped++;
        } else {
            done++;
        }
        mb_arxiv_paper_dispose(&p);
        if (done % BATCH == 0 && done) {
            if (mb_arxiv_catalog_commit(c, &err)) {
                rc = 1;
                break;
            }
            in_tx = 0;
            progress(o, path, done, skipped, started, 0);
        }
    }
    if (in_tx && mb_arxiv_catalog_commit(c, &err)) rc = 1;
    if (rc) fprintf(stderr, "mcpbox arxiv: %s\n", err.msg);
    free(line);
    if (f != stdin) fclose(f);
    progress(o, path, done, skipped, started, 1);
    *total += done;
    return rc;
}

/* ------------------------------------------------------------ files */

static struct {
    mb_arxiv_catalog *c;
    const import_opts *o;
    const char *root, *kind;
    long done, skipped;
    double started;
} walk;

static int put_file(const char *src, const char *dst, int link_it)
{
    if (link_it) {
        unlink(dst);
        if (link(src, dst) == 0) return 0;
    }
    char *data = NULL;
    size_t len = 0;
    mb_err err = {0};
    int rc = mb_read_file(src, (size_t)1 << 31, &data, &len, &err);
    if (rc == MB_OK) rc = mb_write_file_atomic(dst, data, len, 0644, &err);
    if (rc) fprintf(stderr, "\nmcpbox arxiv: %s\n", err.msg);
    free(data);
    return rc ? -1 : 0;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
    size_t ext = strlen(walk.kind) + 1, len = strlen(path);
    if (len <= ext || path[len - ext] != '.' || strcmp(path + len - ext + 1, walk.kind)) return 0;
    const char *rel = path + strlen(walk.root);
    while (*rel == '/') rel++;
    char *stem = mb_strndup(rel, strlen(rel) - ext);
    char *id = NULL;
    int v = 0;
    if (mb_arxiv_id_parse(stem, &id, &v) != MB_OK) {
        /* the file name alone, '_' standing for '/' in old-style ids */
        const char *base = strrchr(stem, '/') ? strrchr(stem, '/') + 1 : stem;
        char *alt = mb_strdup(base);
        char *us = strchr(alt, '_');
        if (us) *us = '/';
        if (mb_arxiv_id_parse(alt, &id, &v) != MB_OK && mb_arxiv_id_parse(base, &id, &v) != MB_OK)
            id = NULL;
        free(alt);
    }
    free(stem);
    if (!id) {
        if (walk.skipped < 5 && !walk.o->quiet)
            fprintf(stderr, "\nmcpbox arxiv: %s: not named after an arXiv id, skipped\n", path);
        walk.skipped++;
        return 0;
    }
    char *name = mb_arxiv_id_file(id, v, walk.kind);
    char *dst = mb_asprintf("%s/%s/%s", mb_arxiv_catalog_dir(walk.c), walk.kind, name);
    if (put_file(path, dst, walk.o->link) == 0) walk.done++;
    else walk.skipped++;
    free(name), free(dst), free(id);
    if ((walk.done + walk.skipped) % 1000 == 0)
        progress(walk.o, walk.root, walk.done, walk.skipped, walk.started, 0);
    return 0;
}

static int import_files(mb_arxiv_catalog *c, const import_opts *o, const char *dir,
                        const char *kind)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mcpbox arxiv: --%s-dir %s: not a directory\n", kind, dir);
        return 1;
    }
    walk.c = c, walk.o = o, walk.root = dir, walk.kind = kind;
    walk.done = walk.skipped = 0;
    walk.started = (double)mb_mono_ms() / 1000.0;
    if (nftw(dir, walk_one, 32, FTW_PHYS) != 0) {
        fprintf(stderr, "mcpbox arxiv: walking %s: %s\n", dir, strerror(errno));
        return 1;
    }
    progress(o, dir, walk.done, walk.skipped, walk.started, 1);
    return 0;
}

static int cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {
        {"catalog", required_argument, 0, 'c'}, {"metadata", required_argument, 0, 'm'},
        {"pdf-dir", required_argument, 0, 'p'}, {"md-dir", required_argument, 0, 'd'},
        {"link", no_argument, 0, 'l'},          {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    import_opts o = {0};
    o.metadata = mb_calloc((size_t)argc + 1, sizeof *o.metadata);
    o.pdf_dirs = mb_calloc((size_t)argc + 1, sizeof *o.pdf_dirs);
    o.md_dirs = mb_calloc((size_t)argc + 1, sizeof *o.md_dirs);
    int c, rc = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'c': o.catalog = optarg; break;
        case 'm': o.metadata[o.n_metadata++] = optarg; break;
        case 'p': o.pdf_dirs[o.n_pdf++] = optarg; break;
        case 'd': o.md_dirs[o.n_md++] = optarg; break;
        case 'l': o.link = 1; break;
        case 'q': o.quiet = 1; break;
        case 'h': usage(stdout); goto out;
        default: usage(stderr); rc = 2; goto out;
        }
    }
    if (!o.catalog || optind < argc || (!o.n_metadata && !o.n_pdf && !o.n_md)) {
        usage(stderr);
        rc = 2;
        goto out;
    }
    mb_arxiv_catalog *cat;
    mb_err err = {0};
    if (mb_arxiv_catalog_open(o.catalog, 1, &cat, &err) != MB_OK) {
        fprintf(stderr, "mcpbox arxiv: %s\n", err.msg);
        rc = 1;
        goto out;
    }
    long total = 0;
    for (size_t i = 0; i < o.n_metadata && !rc; i++) rc = import_metadata(cat, &o, o.metadata[i], &total);
    for (size_t i = 0; i < o.n_pdf && !rc; i++) rc = import_files(cat, &o, o.pdf_dirs[i], "pdf");
    for (size_t i = 0; i < o.n_md && !rc; i++) rc = import_files(cat, &o, o.md_dirs[i], "md");
    if (!o.quiet)
        fprintf(stderr, "mcpbox arxiv: the catalog %s holds %lld papers\n", o.catalog,
                (long long)mb_arxiv_catalog_count(cat));
    mb_arxiv_catalog_close(cat);
out:
    free(o.metadata), free(o.pdf_dirs), free(o.md_dirs);
    return rc;
}

/* ------------------------------------------------------- inspection */

static int print_paper(const mb_arxiv_paper *p, void *ctx)
{
    (void)ctx;
    char iso[32];
    mb_arxiv_iso_utc(p->published, iso);
    printf("%sv%d\t%s\t%s\n", p->id, p->version, iso, p->title);
    return 0;
}

static int cmd_search(int argc, char **argv, int stats)
{
    static const struct option opts[] = {
        {"catalog", required_argument, 0, 'c'}, {"max", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    const char *catalog = NULL;
    long max = 10;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'c') catalog = optarg;
        else if (c == 'n') max = atol(optarg);
        else if (c == 'h') return usage(stdout), 0;
        else return usage(stderr), 2;
    }
    if (!catalog || (!stats && optind != argc - 1) || (stats && optind != argc)) {
        usage(stderr);
        return 2;
    }
    mb_arxiv_catalog *cat;
    mb_err err = {0};
    if (mb_arxiv_catalog_open(catalog, 0, &cat, &err) != MB_OK) {
        fprintf(stderr, "mcpbox arxiv: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    if (stats) {
        printf("papers\t%lld\n", (long long)mb_arxiv_catalog_count(cat));
    } else {
        mb_arxiv_query q;
        mb_arxiv_query_compile(argv[optind], &q);
        fprintf(stderr, "match: %s\nwhere: %s\n", q.match ? q.match : "-", q.where ? q.where : "-");
        mb_arxiv_query_dispose(&q);
        if (mb_arxiv_catalog_search(cat, argv[optind], max, print_paper, NULL, &err) != MB_OK) {
            fprintf(stderr, "mcpbox arxiv: %s\n", err.msg);
            rc = 1;
        }
    }
    mb_arxiv_catalog_close(cat);
    return rc;
}

int mb_cmd_arxiv(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "import")) return cmd_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "search")) return cmd_search(argc - 1, argv + 1, 0);
    if (!strcmp(argv[1], "stats")) return cmd_search(argc - 1, argv + 1, 1);
    fprintf(stderr, "mcpbox arxiv: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
