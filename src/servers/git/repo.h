/*
 * repo.h - repository access for the git server (private to src/servers/git).
 */
#ifndef MB_SERVERS_GIT_REPO_H
#define MB_SERVERS_GIT_REPO_H

#include "servers/git/git.h"

/* A repository as GitPython's Repo(path) finds it (no parent search). */
typedef struct mb_git_repo {
    char *epath;  /* the expanded, normalised path (what GitPython errors print) */
    char *work;   /* working tree, NULL for a bare repository */
    char *gitdir; /* the git directory */
} mb_git_repo;

/* str(pathlib.Path(p)). Caller frees. */
char *mb_git_pypath(const char *p);
/* GitPython's expand_path: ~ and $VARS expanded, absolute, normalised. Caller frees. */
char *mb_git_expand_path(const char *p);

/* 0 when `pypath` (resolved, symlinks followed) lies under an allowed root;
 * otherwise -1 with the refusal text appended to errtext. */
int mb_git_confine(const mb_git_server *g, const char *pypath, mb_buf *errtext);

/* 0 on success; -1 with GitPython's NoSuchPathError / InvalidGitRepositoryError
 * text (the expanded path) appended to errtext. */
int mb_git_repo_open(const char *pypath, mb_git_repo *r, mb_buf *errtext);
void mb_git_repo_dispose(mb_git_repo *r);

/* Runs `git <args...>` in the repository (r may be NULL: server cwd) with
 * LANGUAGE=C LC_ALL=C plus `extra_env` ("K=V", may be NULL). On success appends
 * stdout minus one trailing newline to `out` (may be NULL) and returns 0; on
 * failure appends GitPython's GitCommandError text to errtext and returns -1. */
int mb_git_run(const mb_git_server *g, const mb_git_repo *r, const char *const *args,
               const char *const *extra_env, mb_buf *out, mb_buf *errtext);

/* Like mb_git_run for internal queries: stdout appended untouched, no error text. */
int mb_git_run_raw(const mb_git_server *g, const mb_git_repo *r, const char *const *args,
                   mb_buf *out);

#endif /* MB_SERVERS_GIT_REPO_H */
