/*
 * cmd_archive.c - `mcpbox archive`: the archive layer from a shell, for
 * debugging and benchmarks.
 *
 *   mcpbox archive extract ARCHIVE.tar.gz DIR [--max-bytes N] [--max-entries N]
 *                          [--owner UID:GID] [--staging DIR]
 *   mcpbox archive create DIR OUT.tar.gz [--level N]
 *
 * ARCHIVE or OUT may be "-" for stdin or stdout. A summary goes to stderr.
 * Exit status: 0 done, 1 refused or failed (the reason on stderr), 2 usage.
 */
#define _GNU_SOURCE
#include "archive/archive.h"
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox archive extract ARCHIVE.tar.gz DIR [options]\n"
            "       mcpbox archive create DIR OUT.tar.gz [--level N]\n"
            "\n"
            "extract: unpacks a gzip tar into the existing directory DIR, all or nothing,\n"
            "refusing unsafe members (see docs/ARCHIVES.md).\n"
            "  --max-bytes N     expanded-size limit (e.g. 4G, 512M; default 4G)\n"
            "  --max-entries N   entry-count limit (default 1000000)\n"
            "  --owner UID:GID   owner of every extracted entry (default: unchanged)\n"
            "  --staging DIR     where the staging directory is made (default: DIR's parent)\n"
            "create: writes a gzip tar of DIR (\".\" then \"./path\" members).\n"
            "  --level N         gzip level 1..9 (default %d)\n"
            "ARCHIVE and OUT may be '-' for stdin/stdout.\n",
            MB_ARCHIVE_DEFAULT_GZIP_LEVEL);
}

/* Peak resident memory of this process image in KiB (VmHWM, which unlike
 * getrusage's ru_maxrss does not count the parent's image before exec), or
 * 0 if unknown. Printed so benchmarks and tests can watch memory. */
static unsigned long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    unsigned long kib = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *out = v;
    return 0;
}

static int cmd_extract(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"max-bytes", required_argument, NULL, 'b'},
        {"max-entries", required_argument, NULL, 'n'},
        {"owner", required_argument, NULL, 'o'},
        {"staging", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    mb_archive_extract_opts o = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (mb_parse_size(optarg, &o.max_bytes) != 0 || !o.max_bytes) {
                fprintf(stderr, "mcpbox archive: --max-bytes wants a size like 4G, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'n':
            if (parse_u64(optarg, &o.max_entries) != 0 || !o.max_entries) {
                fprintf(stderr, "mcpbox archive: --max-entries wants a positive count, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'o': {
            uint64_t u, g;
            char *colon = strchr(optarg, ':');
            if (colon) *colon = '\0';
            if (!colon || parse_u64(optarg, &u) || parse_u64(colon + 1, &g) || u >= (uid_t)-1 ||
                g >= (gid_t)-1) {
                fprintf(stderr, "mcpbox archive: --owner wants numeric UID:GID\n");
                return 2;
            }
            o.uid = (uid_t)u;
            o.gid = (gid_t)g;
            break;
        }
        case 's': o.staging_dir = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 2;
    }
    const char *src = argv[optind], *dir = argv[optind + 1];
    int fd = strcmp(src, "-") ? open(src, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0) {
        fprintf(stderr, "mcpbox archive: cannot open %s: %s\n", src, strerror(errno));
        return 1;
    }
    mb_archive_stats st;
    mb_err err = {0};
    int rc = mb_archive_extract(fd, dir, &o, &st, &err);
    if (fd != STDIN_FILENO) close(fd);
    if (rc) {
        fprintf(stderr, "mcpbox archive: %s: %s\n", src, err.msg);
        return 1;
    }
    fprintf(stderr, "extracted %llu entries, %llu bytes (%llu expanded, %llu compressed), "
            "peak RSS %lu KiB\n", (unsigned long long)st.entries, (unsigned long long)st.bytes,
            (unsigned long long)st.expanded, (unsigned long long)st.compressed, peak_rss_kib());
    return 0;
}

static void report_skip(void *payload, const char *path, const char *why)
{
    (void)payload;
    fprintf(stderr, "mcpbox archive: skipped %s: %s\n", path, why);
}

static int cmd_create(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    mb_archive_write_opts o = MB_ARCHIVE_WRITE_OPTS_INIT;
    o.on_skip = report_skip;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': {
            uint64_t v;
            if (parse_u64(optarg, &v) || v < 1 || v > 9) {
                fprintf(stderr, "mcpbox archive: --level wants 1..9\n");
                return 2;
            }
            o.gzip_level = (int)v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind != 2) {
        usage(stderr);
        return 2;
    }
    const char *dir = argv[optind], *out = argv[optind + 1];
    int to_stdout = !strcmp(out, "-");
    int fd = to_stdout ? STDOUT_FILENO : open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "mcpbox archive: cannot create %s: %s\n", out, strerror(errno));
        return 1;
    }
    mb_archive_stats st;
    mb_err err = {0};
    int rc = mb_archive_write_dir(dir, fd, &o, &st, &err);
    if (!to_stdout && close(fd) != 0 && !rc)
        rc = mb_err_sys(&err, errno, "cannot write %s", out);
    if (rc) {
        fprintf(stderr, "mcpbox archive: %s\n", err.msg);
        if (!to_stdout) unlink(out);
        return 1;
    }
    fprintf(stderr, "wrote %llu entries, %llu bytes (%llu compressed), skipped %llu, "
            "peak RSS %lu KiB\n", (unsigned long long)st.entries, (unsigned long long)st.bytes,
            (unsigned long long)st.compressed, (unsigned long long)st.skipped, peak_rss_kib());
    return 0;
}

int mb_cmd_archive(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "extract")) return cmd_extract(argc - 1, argv + 1);
    if (!strcmp(argv[1], "create")) return cmd_create(argc - 1, argv + 1);
    fprintf(stderr, "mcpbox archive: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
