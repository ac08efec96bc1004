/*
 * profile.h - the face of the profile layer: benchmark presets read from data files.
 *
 * A profile describes how one benchmark expects its local sandbox to look: which
 * MCP servers it offers, the command line and environment each server runs with
 * (terminal allow-lists, memory file path, code-executor storage, git version...),
 * the seed data preloaded into /data, and the sandbox limits. Profiles are JSON
 * files named `<dir>/<name>.json` (profiles/none.json, profiles/MCP_Atlas.json, ...);
 * their format is documented in docs/PROFILES.md. Nothing here is compiled in:
 * changing a preset means editing its file.
 *
 * Placeholders in argv, env values and cwd are expanded at load time:
 *   ${MCPBOX}  the path of the mcpbox binary as the server process sees it
 *   ${DATA}    the workspace mount point as the server process sees it ("/data")
 * An unknown ${NAME} is a load error, so a typo never reaches a server.
 *
 * Ownership: mb_profile_load() returns a profile owned by the caller, freed with
 * mb_profile_free(); every pointer inside it is owned by the profile.
 * Thread safety: a loaded profile is immutable and may be shared between threads.
 */
#ifndef MB_PROFILE_H
#define MB_PROFILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* The benchmark value a client sends (null/"" → "none") mapped to a profile name. */
#define MB_PROFILE_DEFAULT "none"

/* Sandbox limits a profile asks for; 0 means "the daemon's default". */
typedef struct mb_profile_limits {
    uint64_t memory_bytes;
    uint32_t pids_max;
    uint32_t cpu_millis;
    uint64_t disk_bytes;
    int allow_network; /* 0 = loopback only */
} mb_profile_limits;

/* A host path shown read-only inside the sandbox ("sandbox": {"binds":
 * {"/opt/inside": "/host/path"}}), for servers installed outside /usr. */
typedef struct mb_profile_bind {
    char *inside;
    char *host;
    int missing_told; /* the daemon said once that the host path is missing (atomic) */
} mb_profile_bind;

/* How one server is started inside the sandbox. */
typedef struct mb_profile_server {
    char *name;      /* Klavis server name, e.g. "terminal" */
    char *upstream;  /* what it mirrors, e.g. "cli-mcp-server 0.2.5" (may be "") */
    char **argv;     /* NULL-terminated, placeholders expanded, argv[0] non-empty */
    char **envp;     /* NULL-terminated "KEY=VALUE": base_env overlaid by the server's env */
    char *cwd;       /* working directory inside the sandbox (default ${DATA}) */
    char **headers;  /* "headers": request headers the gateway forwards to it per
                      * request (lowercase HTTP names, NULL-terminated; NULL: none) */
    json_t *entry;   /* the server's object as written in the file, placeholders not
                      * expanded (borrowed; for metadata such as "upstream" or settings) */
} mb_profile_server;

/* Where the preset's /data comes from. */
typedef struct mb_profile_seed {
    int required;     /* 1: acquiring without a configured seed dir is refused */
    char *description;/* what the seed holds / how to build it (may be "") */
    char *when_missing; /* told to a client acquiring while no seed is served (may be "") */
} mb_profile_seed;

typedef struct mb_profile {
    char *name;                 /* file stem, e.g. "MCP_Atlas" */
    char *description;
    mb_profile_server *servers; /* in file order */
    size_t nservers;
    mb_profile_seed seed;
    mb_profile_limits limits;
    mb_profile_bind *binds;     /* in file order */
    size_t n_binds;
    json_t *root;               /* the whole file (owned; entries point into it) */
} mb_profile;

/* Values substituted for the placeholders; NULL fields take the defaults
 * ("/usr/local/bin/mcpbox" is NOT assumed: mcpbox_bin must be given). */
typedef struct mb_profile_vars {
    const char *mcpbox_bin; /* required */
    const char *data_dir;   /* default "/data" */
    const char *base_dir;   /* where relative sandbox.binds host paths start; default
                             * the directory holding the profiles directory */
    const char *state_dir;  /* the daemon's --data-dir: what "${STATE}/..." in a
                             * sandbox.binds host path starts with (NULL: such a bind
                             * names nothing, and is left out like a missing one) */
} mb_profile_vars;

/* Loads `<dir>/<name>.json`. `name` must match [A-Za-z0-9_.-]+ without ".." (it
 * names a file). NULL or "" loads MB_PROFILE_DEFAULT. Errors: MB_ENOTFOUND (no such
 * profile; the message lists what exists), MB_EINVAL (malformed file; the message
 * names the file and the offending key). */
int mb_profile_load(const char *dir, const char *name, const mb_profile_vars *vars,
                    mb_profile **out, mb_err *err);

/* The server entry called `server`, or NULL if the profile does not offer it.
 * Borrowed; valid until mb_profile_free(). */
const mb_profile_server *mb_profile_server_find(const mb_profile *p, const char *server);

/* Lists the profile names in `dir` (sorted). *out is a NULL-terminated array owned by
 * the caller: free each string and the array (mb_profile_names_free does both). */
int mb_profile_names(const char *dir, char ***out, mb_err *err);
void mb_profile_names_free(char **names);

void mb_profile_free(mb_profile *p);

#endif /* MB_PROFILE_H */
