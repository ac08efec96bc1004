/*
 * service.c - the Canvas node service: the table of live sandboxes (their
 * database, agent user, socket), attach/detach/reset/initialize/dump, and
 * which sandbox a token belongs to.
 *
 * Paths of sandbox ID (DIR = the daemon's data dir):
 *   DIR/canvas/ID.db         the sandbox's Canvas
 *   DIR/canvas/ID.base.db    its state after attach or the last initialize
 *   DIR/egress/ID/canvas-api.sock   the socket its canvas MCP server uses
 *                            (that directory is bound at /mnt/egress inside)
 */
#include "canvas/svc_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CLAIM_KIND "canvas-tokens"

static char *db_path(mb_canvas_service *s, const char *id, const char *suffix)
{
    return mb_asprintf("%s/canvas/%s%s", s->data_dir, id, suffix);
}

static void sbx_free(mb_canvas__sbx *x);
static int listen_unix(const char *path, mb_err *err);

/* After a restart: the databases of sandboxes still live are served again
 * (their agent user is in the database's meta table); those of released
 * sandboxes are removed. */
static void reconcile(mb_canvas_service *s)
{
    char *dir = mb_asprintf("%s/canvas", s->data_dir);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n != 36 + 3 || strcmp(e->d_name + 36, ".db")) continue;
        char id[37];
        memcpy(id, e->d_name, 36);
        id[36] = 0;
        if (!mb_is_uuid(id)) continue;
        mb_sandbox_rec rec;
        int live = s->store && mb_store_sandbox_get(s->store, id, &rec, NULL) == MB_OK &&
                   strcmp(rec.status, "released");
        char *path = db_path(s, id, ".db");
        mb_canvas__sbx *x = NULL;
        if (live) {
            x = mb_calloc(1, sizeof *x);
            snprintf(x->id, sizeof x->id, "%s", id);
            x->lfd = -1;
            if (mb_canvas_db_open(path, &x->db, NULL) == MB_OK) {
                x->agent_email = mb_canvas_db_meta_get(x->db, "agent_email");
                x->agent_token = mb_canvas_db_meta_get(x->db, "agent_token");
                if (x->agent_token) x->agent_uid = mb_canvas_db_token_user(x->db, x->agent_token);
                x->sock_path = mb_asprintf("%s/egress/%s/" MB_CANVAS_SOCK_NAME, s->data_dir, id);
                char *edir = mb_asprintf("%s/egress/%s", s->data_dir, id);
                mb_mkdir_p(edir, 0755, NULL);
                free(edir);
                x->lfd = listen_unix(x->sock_path, NULL);
            }
            if (!x->db || !x->agent_token || x->lfd < 0) {
                mb_warn("canvas: cannot serve the Canvas of sandbox %s again", id);
                if (x->lfd < 0) x->lfd = -1;
                sbx_free(x);
                x = NULL;
            }
        }
        if (x) {
            s->v = mb_realloc(s->v, (s->n + 1) * sizeof *s->v);
            s->v[s->n++] = x;
            mb_info("canvas: serving the Canvas of sandbox %s again", id);
        } else if (!live) {
            static const char *const suffixes[] = {".db", ".base.db", ".first.db"};
            for (size_t i = 0; i < 3; i++) {
                char *p = db_path(s, id, suffixes[i]);
                unlink(p);
                free(p);
            }
        }
        free(path);
    }
    if (d) closedir(d);
    free(dir);
}

int mb_canvas_service_new(const mb_canvas_opts *o, mb_canvas_service **out, mb_err *err)
{
    mb_canvas_service *s = mb_calloc(1, sizeof *s);
    s->data_dir = mb_strdup(o->data_dir);
    s->store = o->store;
    s->users_for = o->users_for ? mb_strdup(o->users_for) : NULL;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->tpl_lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    char *dir = mb_asprintf("%s/canvas", s->data_dir);
    int rc = mb_mkdir_p(dir, 0700, err);
    free(dir);
    if (!rc && o->users_file) rc = mb_canvas_users_load(o->users_file, &s->users, err);
    if (!rc) reconcile(s);
    if (!rc) rc = mb_canvas__sock_start(s, err);
    if (!rc && (!o->listen || strcmp(o->listen, "off"))) {
        mb_err perr = {0};
        if (mb_canvas__port_start(s, o->listen ? o->listen : "127.0.0.1:10001", &perr))
            mb_warn("canvas: no REST port: %s", perr.msg);
    }
    if (!rc && o->https_listen && strcmp(o->https_listen, "off")) {
        mb_err perr = {0};
        if (!o->tls_pem)
            mb_warn("canvas: no HTTPS port: --canvas-https needs --canvas-tls FILE");
        else if (mb_canvas__https_start(s, o->https_listen, o->tls_pem, &perr))
            mb_warn("canvas: no HTTPS port: %s", perr.msg);
    }
    if (rc) {
        mb_canvas_service_free(s);
        return rc;
    }
    *out = s;
    return MB_OK;
}

static void sbx_free(mb_canvas__sbx *x)
{
    if (!x) return;
    if (x->lfd >= 0) close(x->lfd);
    mb_canvas_db_close(x->db);
    free(x->agent_token);
    free(x->agent_email);
    free(x->sock_path);
    free(x);
}

void mb_canvas_service_free(mb_canvas_service *s)
{
    if (!s) return;
    mb_canvas__port_stop(s);
    mb_canvas__sock_stop(s);
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i]->sock_path) unlink(s->v[i]->sock_path);
        sbx_free(s->v[i]);
    }
    free(s->v);
    mb_canvas_users_free(s->users);
    free(s->users_for);
    free(s->data_dir);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->tpl_lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

mb_canvas__sbx *mb_canvas__get(mb_canvas_service *s, const char *id)
{
    pthread_mutex_lock(&s->lock);
    mb_canvas__sbx *found = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (!s->v[i]->closing && !strcmp(s->v[i]->id, id)) {
            found = s->v[i];
            found->refs++;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    return found;
}

mb_canvas__sbx *mb_canvas__by_token(mb_canvas_service *s, const char *token, int64_t *uid)
{
    /* Each live sandbox's own token table answers; claims keep fixed sets
     * exclusive, generated tokens are random. */
    pthread_mutex_lock(&s->lock);
    size_t n = 0;
    mb_canvas__sbx **v = mb_calloc(s->n ? s->n : 1, sizeof *v);
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i]->closing) continue;
        v[n] = s->v[i];
        v[n++]->refs++;
    }
    pthread_mutex_unlock(&s->lock);
    mb_canvas__sbx *found = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!found && (*uid = mb_canvas_db_token_user(v[i]->db, token)) > 0)
            found = v[i];
        else
            mb_canvas__put(s, v[i]);
    }
    free(v);
    return found;
}

void mb_canvas__put(mb_canvas_service *s, mb_canvas__sbx *x)
{
    pthread_mutex_lock(&s->lock);
    x->refs--;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* Copies a database file (no transaction is open on it). */
static int file_copy(const char *src, const char *dst, mb_err *err)
{
    char *tmp = mb_asprintf("%s.tmp", dst);
    int in = open(src, O_RDONLY | O_CLOEXEC), rc = MB_OK;
    int out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in < 0 || out < 0) {
        rc = mb_err_sys(err, errno, "cannot copy %s", src);
    } else {
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) {
                rc = mb_err_sys(err, errno, "cannot write %s", tmp);
                break;
            }
        if (n < 0) rc = mb_err_sys(err, errno, "cannot read %s", src);
    }
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0 && !rc) rc = mb_err_sys(err, errno, "cannot write %s", tmp);
    if (!rc && rename(tmp, dst) != 0) rc = mb_err_sys(err, errno, "cannot rename %s", tmp);
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

/* DIR/canvas/template-SET.db (made on first use): the schema, the root
 * account and, for a fixed set, its users; copied to path. */
static int template_copy(mb_canvas_service *s, const mb_canvas_users *users, const char *path,
                         mb_err *err)
{
    char *tpl = mb_asprintf("%s/canvas/template-%s.db", s->data_dir,
                            users ? users->digest : "empty");
    int rc = MB_OK;
    pthread_mutex_lock(&s->tpl_lock);
    if (access(tpl, R_OK) != 0) {
        char *tmp = mb_asprintf("%s.new", tpl);
        unlink(tmp);
        mb_canvas_db *db = NULL;
        mb_canvas_users none = {0};
        rc = mb_canvas_db_open(tmp, &db, err);
        if (!rc) rc = mb_canvas_db_seed(db, users ? users : &none, err);
        mb_canvas_db_close(db);
        if (!rc && rename(tmp, tpl) != 0) rc = mb_err_sys(err, errno, "cannot write %s", tpl);
        if (rc) unlink(tmp);
        free(tmp);
    }
    pthread_mutex_unlock(&s->tpl_lock);
    if (!rc) rc = file_copy(tpl, path, err);
    free(tpl);
    return rc;
}

static int listen_unix(const char *path, mb_err *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return mb_err_set(err, MB_EINVAL, "socket path too long: %s", path);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || chmod(path, 0666) != 0 ||
        listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot listen on %s", path);
    }
    return fd;
}

int mb_canvas_attach(mb_canvas_service *s, const char *id, const char *benchmark,
                     const char *agent_email, mb_err *err)
{
    mb_canvas_detach(s, id); /* a stale copy of the same id */
    struct timespec ts0;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    int fixed = s->users && (!s->users_for || (benchmark && !strcmp(benchmark, s->users_for)));
    mb_canvas_users *gen = fixed ? NULL : mb_canvas_users_generated();
    const mb_canvas_users *users = fixed ? s->users : gen;
    size_t users_n = users->n;
    int rc = MB_OK;
    if (fixed && s->store) {
        char holder[37] = "";
        rc = mb_store_claim_take(s->store, CLAIM_KIND, users->digest, id, holder, err);
        if (rc == MB_ECONFLICT)
            rc = mb_err_set(err, MB_ECONFLICT, "the Canvas token set of %s is held by live sandbox %s"
                            " (one sandbox at a time may use a fixed token set)",
                            benchmark ? benchmark : "this profile", holder);
        if (rc) {
            mb_canvas_users_free(gen);
            return rc;
        }
    }
    mb_canvas__sbx *x = mb_calloc(1, sizeof *x);
    snprintf(x->id, sizeof x->id, "%s", id);
    x->lfd = -1;
    char *path = db_path(s, id, ".db"), *base = db_path(s, id, ".base.db");
    char *first = db_path(s, id, ".first.db");
    unlink(path);
    /* A fixed set is seeded once into a template, then copied; a generated
     * admin is seeded into a copy of the empty template. */
    rc = template_copy(s, fixed ? users : NULL, path, err);
    if (!rc) rc = mb_canvas_db_open(path, &x->db, err);
    if (!rc && !fixed) rc = mb_canvas_db_seed(x->db, users, err);
    if (!rc) {
        const mb_canvas_user *agent = NULL;
        for (size_t i = 0; agent_email && i < users->n; i++)
            if (!strcmp(users->v[i].email, agent_email)) agent = &users->v[i];
        for (size_t i = 0; !agent && i < users->n; i++)
            if (users->v[i].admin) agent = &users->v[i];
        if (!agent) agent = &users->v[0];
        x->agent_token = mb_strdup(agent->token);
        x->agent_email = mb_strdup(agent->email);
        x->agent_uid = mb_canvas_db_token_user(x->db, agent->token);
        rc = mb_canvas_db_meta_set(x->db, "agent_email", agent->email, err);
        if (!rc) rc = mb_canvas_db_meta_set(x->db, "agent_token", agent->token, err);
        if (!rc) rc = file_copy(path, first, err);
        if (!rc) rc = file_copy(path, base, err);
        if (!rc) mb_canvas_db_trim(x->db);
    }
    mb_canvas_users_free(gen);
    if (!rc) {
        char *dir = mb_asprintf("%s/egress/%s", s->data_dir, id);
        mb_mkdir_p(dir, 0755, NULL);
        x->sock_path = mb_asprintf("%s/" MB_CANVAS_SOCK_NAME, dir);
        free(dir);
        int fd = listen_unix(x->sock_path, err);
        if (fd < 0) rc = fd;
        else x->lfd = fd;
    }
    free(path);
    free(base);
    free(first);
    if (rc) {
        if (x->lfd >= 0) close(x->lfd);
        sbx_free(x);
        if (fixed && s->store) mb_store_claim_drop(s->store, id, CLAIM_KIND, NULL);
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    s->v = mb_realloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = x;
    pthread_mutex_unlock(&s->lock);
    mb_canvas__sock_wake(s);
    struct timespec ts1;
    clock_gettime(CLOCK_MONOTONIC, &ts1);
    mb_info("canvas: %s ready in %.2f ms (%zu users)", id,
            (double)(ts1.tv_sec - ts0.tv_sec) * 1e3 + (double)(ts1.tv_nsec - ts0.tv_nsec) / 1e6,
            users_n);
    return MB_OK;
}

void mb_canvas_detach(mb_canvas_service *s, const char *id)
{
    pthread_mutex_lock(&s->lock);
    mb_canvas__sbx *x = NULL;
    size_t at = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i]->id, id)) x = s->v[i], at = i;
    if (x) {
        x->closing = 1;
        mb_canvas__sock_close_locked(s, x);
        while (x->refs > 0) pthread_cond_wait(&s->cond, &s->lock);
        s->v[at] = s->v[--s->n];
    }
    pthread_mutex_unlock(&s->lock);
    if (x) {
        if (x->sock_path) {
            unlink(x->sock_path);
            char *dir = mb_strdup(x->sock_path);
            *strrchr(dir, '/') = '\0';
            rmdir(dir); /* empty unless the egress proxy still has sockets there */
            free(dir);
        }
        sbx_free(x);
    }
    static const char *const suffixes[] = {".db", ".base.db", ".first.db"};
    for (size_t i = 0; i < 3; i++) {
        char *p = db_path(s, id, suffixes[i]);
        unlink(p);
        free(p);
    }
    if (s->store) mb_store_claim_drop(s->store, id, CLAIM_KIND, NULL);
}

/* Copies the baseline file into the live database (SQLite's backup API):
 * readers and writers see the old or the new state, never a mix. */
static int restore(mb_canvas_service *s, mb_canvas__sbx *x, const char *suffix, mb_err *err)
{
    char *base = db_path(s, x->id, suffix);
    sqlite3 *src = NULL;
    int rc = MB_OK;
    if (sqlite3_open_v2(base, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        rc = mb_err_set(err, MB_EIO, "cannot open %s", base);
    } else {
        pthread_mutex_lock(&x->db->lock);
        sqlite3_backup *b = sqlite3_backup_init(x->db->s, "main", src, "main");
        if (!b || sqlite3_backup_step(b, -1) != SQLITE_DONE)
            rc = mb_err_set(err, MB_EIO, "canvas reset: %s", sqlite3_errmsg(x->db->s));
        if (b) sqlite3_backup_finish(b);
        pthread_mutex_unlock(&x->db->lock);
    }
    sqlite3_close(src);
    free(base);
    return rc;
}

int mb_canvas_reset(mb_canvas_service *s, const char *id, mb_err *err)
{
    mb_canvas__sbx *x = mb_canvas__get(s, id);
    if (!x) return mb_err_set(err, MB_ENOTFOUND, "sandbox %s has no Canvas", id);
    int rc = restore(s, x, ".base.db", err);
    mb_canvas__put(s, x);
    return rc;
}

int mb_canvas_initialize(mb_canvas_service *s, const char *id, json_t *data, json_t **detail,
                         mb_err *err)
{
    mb_canvas__sbx *x = mb_canvas__get(s, id);
    if (!x) return mb_err_set(err, MB_ENOTFOUND, "sandbox %s has no Canvas", id);
    /* From the state after attach: the data replaces what an earlier
     * initialize loaded. */
    char *base = db_path(s, id, ".base.db");
    int rc = restore(s, x, ".first.db", err);
    if (!rc && data && json_is_object(data) && json_object_size(data))
        rc = mb_canvas_db_load_data(x->db, data, detail, err);
    if (!rc) {
        unlink(base);
        rc = mb_canvas_db_backup(x->db, base, err);
    }
    free(base);
    mb_canvas__put(s, x);
    return rc;
}

int mb_canvas_dump(mb_canvas_service *s, const char *id, json_t **out, mb_err *err)
{
    mb_canvas__sbx *x = mb_canvas__get(s, id);
    if (!x) return mb_err_set(err, MB_ENOTFOUND, "sandbox %s has no Canvas", id);
    *out = mb_canvas_db_dump_data(x->db);
    mb_canvas__put(s, x);
    return MB_OK;
}

json_t *mb_canvas_auth_data(mb_canvas_service *s, const char *id)
{
    mb_canvas__sbx *x = mb_canvas__get(s, id);
    if (!x) return json_null();
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/api/v1", s->port);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "api_token", x->agent_token, "user_email",
                          x->agent_email, "domain", url + 7, "base_url", url);
    char *slash = strchr(json_string_value(json_object_get(o, "domain")), '/');
    if (slash) json_object_set_new(o, "domain", json_stringn(url + 7, (size_t)(slash - (url + 7))));
    mb_canvas__put(s, x);
    return o;
}

unsigned mb_canvas_service_port(mb_canvas_service *s) { return s->port; }
unsigned mb_canvas_service_https_port(mb_canvas_service *s) { return s->https_port; }
