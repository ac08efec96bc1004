/*
 * domains.c - the mail layer's state and the life cycle of a sandbox's
 * domain: claim (exclusive across sandboxes through the store), users
 * provisioned by writing one passwd-file, the sandbox's sockets opened;
 * at release the sockets closed, sessions kicked, users and mail removed.
 * Dovecot and the SMTP front start at the first attach.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DOMAIN_NUMBER 100000

typedef struct mb_mail_dom dom_ent;
typedef struct mb_mail_doms dom_tab;

static dom_tab *tab_of(mb_mail *m) { return &m->doms; }

/* ------------------------------------------------------------- life cycle */

static int split_listen(const char *spec, const char *def, char **host, int *port, mb_err *err)
{
    const char *s = spec ? spec : def;
    const char *colon = strrchr(s, ':');
    char *end = NULL;
    long p = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == s || !end || *end || p < 1 || p > 65535)
        return mb_err_set(err, MB_EINVAL, "mail: wants ADDR:PORT (IPv4), got '%s'", s);
    *host = mb_strndup(s, (size_t)(colon - s));
    *port = (int)p;
    return MB_OK;
}

int mb_mail_new(const mb_mail_opts *o, mb_mail **out, mb_err *err)
{
    mb_mail *m = mb_calloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->sweep_cond, NULL);
    char *abs = realpath(o->data_dir, NULL);
    m->root = mb_asprintf("%s/mail", abs ? abs : o->data_dir);
    free(abs);
    m->dovecot_bin = mb_strdup(o->dovecot_bin ? o->dovecot_bin : "/usr/sbin/dovecot");
    m->store = o->store;
    m->dovecot_pid = -1;
    int rc = split_listen(o->imap_listen, "127.0.0.1:1143", &m->imap_host, &m->imap_port, err);
    if (!rc) rc = split_listen(o->smtp_listen, "127.0.0.1:1587", &m->smtp_host, &m->smtp_port, err);
    if (!rc && o->users_file) rc = mb_mail__users_load(m, o->users_file, err);
    if (!rc) {
        struct passwd *pw = geteuid() == 0 ? getpwnam("dovecot") : getpwuid(geteuid());
        if (pw) {
            m->mail_uid = pw->pw_uid;
            m->mail_gid = pw->pw_gid;
            m->mail_user = mb_strdup(pw->pw_name);
        } else {
            m->mail_uid = geteuid();
            m->mail_gid = getegid();
            m->mail_user = mb_strdup("dovecot");
        }
    }
    if (rc) {
        mb_mail_free(m);
        return rc;
    }
    *out = m;
    return MB_OK;
}

void mb_mail_free(mb_mail *m)
{
    if (!m) return;
    if (m->sweeper_on) {
        pthread_mutex_lock(&m->lock);
        m->sweeper_on = 0;
        pthread_cond_broadcast(&m->sweep_cond);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->sweeper, NULL);
    }
    while (m->sweeps) {
        struct mb_mail_sweep *s = m->sweeps;
        m->sweeps = s->next;
        free(s);
    }
    if (m->started) {
        mb_mail__net_free(m->net);
        mb_mail__dovecot_stop(m);
    }
    free(m->doms.v);
    mb_mail__users_free(m);
    free(m->start_error);
    free(m->root);
    free(m->dovecot_bin);
    free(m->imap_host);
    free(m->smtp_host);
    free(m->mail_user);
    pthread_cond_destroy(&m->sweep_cond);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static int owned_locked(mb_mail *m, const char *domain)
{
    mb_assert_held(&m->lock);
    for (size_t i = 0; i < m->doms.n; i++)
        if (!strcmp(m->doms.v[i].domain, domain)) return 1;
    return 0;
}

/* Ends the sessions of a domain nobody owns and removes its files. */
static void sweep_domain(mb_mail *m, const char *domain)
{
    mb_mail__dovecot_kick(m, domain);
    char *dir = mb_mail__domain_dir(m, domain);
    mb_err e2;
    pthread_mutex_lock(&m->lock);
    int owned = owned_locked(m, domain);
    if (!owned && mb_rm_rf(dir, &e2) != MB_OK) mb_warn("mail: %s", e2.msg);
    pthread_mutex_unlock(&m->lock);
    free(dir);
}

static void *sweeper_main(void *arg)
{
    mb_mail *m = arg;
    pthread_mutex_lock(&m->lock);
    while (m->sweeper_on) {
        struct mb_mail_sweep **pp = &m->sweeps, *due = NULL;
        double now = mb_now(), next = now + 3600;
        for (; *pp; pp = &(*pp)->next)
            if ((*pp)->due <= now) {
                due = *pp;
                *pp = due->next;
                break;
            } else if ((*pp)->due < next) {
                next = (*pp)->due;
            }
        if (due) {
            int owned = owned_locked(m, due->domain);
            pthread_mutex_unlock(&m->lock);
            if (!owned) sweep_domain(m, due->domain);
            free(due);
            pthread_mutex_lock(&m->lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double wait = next - now;
        ts.tv_sec += (time_t)wait;
        ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&m->sweep_cond, &m->lock, &ts);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* Dovecot and the front, once; a failure is kept and told to every attach. */
static int ensure_started(mb_mail *m, mb_err *err)
{
    pthread_mutex_lock(&m->lock);
    int rc = MB_OK;
    if (m->started) goto out;
    rc = mb_mail__dovecot_start(m, err);
    if (!rc) {
        rc = mb_mail__net_new(m, &m->net, err);
        if (!rc) rc = mb_mail__net_listen_tcp(m->net, m->smtp_host, m->smtp_port, MB_MAIL_L_SMTP,
                                              err);
        if (rc) {
            mb_mail__net_free(m->net);
            m->net = NULL;
            pthread_mutex_unlock(&m->lock);
            mb_mail__dovecot_stop(m);
            pthread_mutex_lock(&m->lock);
        }
    }
    if (!rc) {
        m->started = 1;
        m->sweeper_on = pthread_create(&m->sweeper, NULL, sweeper_main, m) == 0;
    } else rc = mb_err_wrap(err, MB_EBUSY, "the mail system cannot start");
out:
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* ---------------------------------------------------------------- domains */

/* tmp + rename, without fsync: these files are rebuilt at every attach,
 * so a crash may lose them but never leaves half of one. */
int mb_mail__write_file(const char *path, const void *data, size_t len, mode_t mode,
                        mb_err *err)
{
    char *tmp = mb_asprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    int rc = MB_OK;
    if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len))
        rc = mb_err_sys(err, errno, "cannot write %s", tmp);
    if (fd >= 0) close(fd);
    if (!rc && rename(tmp, path) != 0) rc = mb_err_sys(err, errno, "cannot rename %s", tmp);
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

char *mb_mail__domain_dir(mb_mail *m, const char *domain)
{
    return mb_asprintf("%s/domains/%s", m->root, domain);
}

char *mb_mail_sandbox_dir(mb_mail *m, const char *sandbox_id)
{
    if (!mb_is_uuid(sandbox_id)) return NULL;
    char *top = mb_asprintf("%s/sock", m->root);
    mb_mkdir_p(top, 0711, NULL);
    free(top);
    char *dir = mb_asprintf("%s/sock/%s", m->root, sandbox_id);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        mb_warn("mail: cannot create %s: %s", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

int mb_mail__domain_owner(mb_mail *m, const char *domain, char *out)
{
    dom_tab *t = tab_of(m);
    int rc = MB_ENOTFOUND;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].domain, domain)) {
            if (out) memcpy(out, t->v[i].sandbox, 37);
            rc = MB_OK;
        }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int mb_mail_domain(mb_mail *m, const char *sandbox_id, char *out, size_t cap, mb_err *err)
{
    dom_tab *t = tab_of(m);
    int rc = MB_ENOTFOUND;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].sandbox, sandbox_id)) {
            snprintf(out, cap, "%s", t->v[i].domain);
            rc = MB_OK;
        }
    pthread_mutex_unlock(&m->lock);
    if (rc) return mb_err_set(err, rc, "sandbox %s has no mail domain (was it acquired with "
                              "poste_email_toolathlon?)", sandbox_id);
    return rc;
}

/* Claims `domain`, or the first free mcpN.com when it is empty. */
static int claim(mb_mail *m, const char *sandbox_id, char *domain, mb_err *err)
{
    char holder[37];
    if (*domain) {
        int rc = mb_store_claim_take(m->store, MB_MAIL_CLAIM, domain, sandbox_id, holder, err);
        if (rc == MB_ECONFLICT)
            return mb_err_set(err, MB_ECONFLICT, "mail domain %s is in use by another live "
                              "sandbox; release it first or choose another test_account_email "
                              "domain", domain);
        return rc;
    }
    for (int k = 1; k <= MAX_DOMAIN_NUMBER; k++) {
        snprintf(domain, MB_MAIL_DOMAIN_MAX + 1, "mcp%d.com", k);
        mb_err e2 = {0};
        int rc = mb_store_claim_take(m->store, MB_MAIL_CLAIM, domain, sandbox_id, holder, &e2);
        if (rc != MB_ECONFLICT) {
            if (rc && err) *err = e2;
            return rc;
        }
    }
    return mb_err_set(err, MB_EBUSY, "every mail domain mcp1.com..mcp%d.com is in use",
                      MAX_DOMAIN_NUMBER);
}

static int provision(mb_mail *m, const char *sandbox_id, const char *domain, mb_err *err)
{
    char *dir = mb_mail__domain_dir(m, domain);
    char *users = mb_asprintf("%s/users", dir);
    int rc = MB_OK;
    if (mkdir(dir, 0711) != 0 && errno != EEXIST) rc = mb_err_sys(err, errno, "mkdir %s", dir);
    if (!rc && mkdir(users, 0700) != 0 && errno != EEXIST)
        rc = mb_err_sys(err, errno, "mkdir %s", users);
    if (!rc && chown(users, m->mail_uid, m->mail_gid) != 0)
        rc = mb_err_sys(err, errno, "chown %s", users);
    if (!rc) {
        char *p = mb_asprintf("%s/sandbox", dir);
        rc = mb_mail__write_file(p, sandbox_id, strlen(sandbox_id), 0600, err);
        free(p);
    }
    if (!rc) {
        mb_buf pw = {0};
        mb_mail__passwd_render(m, domain, &pw);
        char *p = mb_asprintf("%s/passwd", dir);
        rc = mb_mail__write_file(p, pw.data ? pw.data : "", pw.len, 0600, err);
        free(p);
        mb_buf_free(&pw);
    }
    free(users);
    free(dir);
    return rc;
}

/* The sandbox's own account (its test_account_email, when that user is
 * provisioned) for the MCP server inside: DIR/account.json. */
static void write_account(mb_mail *m, const char *dir, const char *local, const char *domain)
{
    for (size_t i = 0; local && i < m->n_users; i++) {
        if (strcmp(m->users[i].local, local) != 0) continue;
        json_t *a = json_object();
        char *email = mb_asprintf("%s@%s", local, domain);
        json_object_set_new(a, "email", json_string(email));
        json_object_set_new(a, "password", json_string(m->users[i].password));
        json_object_set_new(a, "name", json_string(m->users[i].name));
        char *text = json_dumps(a, JSON_COMPACT);
        char *path = mb_asprintf("%s/account.json", dir);
        if (text) mb_mail__write_file(path, text, strlen(text), 0644, NULL);
        free(path);
        free(text);
        free(email);
        json_decref(a);
        return;
    }
}

static int open_sockets(mb_mail *m, const char *sandbox_id, const char *domain,
                        const char *local, mb_err *err)
{
    char *dir = mb_mail_sandbox_dir(m, sandbox_id);
    if (!dir) return mb_err_set(err, MB_EIO, "cannot create the mail socket directory");
    write_account(m, dir, local, domain);
    char *imap = mb_asprintf("%s/imap.sock", dir), *smtp = mb_asprintf("%s/smtp.sock", dir);
    int rc = mb_mail__net_listen_unix(m->net, imap, domain, MB_MAIL_L_IMAP, err);
    if (!rc) rc = mb_mail__net_listen_unix(m->net, smtp, domain, MB_MAIL_L_SMTP, err);
    free(imap);
    free(smtp);
    free(dir);
    return rc;
}

int mb_mail_attach(mb_mail *m, const char *sandbox_id, const char *email, mb_err *err)
{
    double t0 = mb_now();
    char domain[MB_MAIL_DOMAIN_MAX + 1] = "", local[65] = "";
    if (email && *email) {
        if (mb_mail__addr_split(email, strlen(email), local, sizeof local, domain, sizeof domain))
            return mb_err_set(err, MB_EINVAL, "test_account_email '%.200s' is not an address "
                              "like name@mcp1.com", email);
    }
    mb_err why = {0};
    int rc = ensure_started(m, &why);
    if (rc) {
        /* The sandbox's other servers still work; this one reports that it
         * cannot connect (check_connection) and auth_data stays null. */
        mb_warn("mail: sandbox %s gets no mail domain: %s", sandbox_id, why.msg);
        return MB_OK;
    }
    rc = claim(m, sandbox_id, domain, err);
    if (rc) return rc;
    /* A claim taken over from a released holder may have left files. */
    char prev[37];
    if (mb_mail__domain_owner(m, domain, prev) == MB_OK && strcmp(prev, sandbox_id) != 0)
        mb_mail_detach(m, prev);
    rc = provision(m, sandbox_id, domain, err);
    if (!rc) {
        dom_tab *t = tab_of(m);
        pthread_mutex_lock(&m->lock);
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 16;
            t->v = mb_realloc(t->v, t->cap * sizeof *t->v);
        }
        dom_ent *e = &t->v[t->n++];
        snprintf(e->sandbox, sizeof e->sandbox, "%s", sandbox_id);
        snprintf(e->domain, sizeof e->domain, "%s", domain);
        pthread_mutex_unlock(&m->lock);
        rc = open_sockets(m, sandbox_id, domain, *local ? local : NULL, err);
    }
    if (rc) {
        mb_mail_detach(m, sandbox_id);
        mb_err ignored;
        mb_store_claim_drop(m->store, sandbox_id, MB_MAIL_CLAIM, &ignored);
        return rc;
    }
    mb_info("mail: sandbox %s owns %s (%zu users, %.1f ms)", sandbox_id, domain, m->n_users,
            (mb_now() - t0) * 1000);
    return MB_OK;
}

void mb_mail_detach(mb_mail *m, const char *sandbox_id)
{
    double t0 = mb_now();
    dom_tab *t = tab_of(m);
    char domain[MB_MAIL_DOMAIN_MAX + 1] = "";
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].sandbox, sandbox_id)) {
            snprintf(domain, sizeof domain, "%s", t->v[i].domain);
            t->v[i] = t->v[--t->n];
            break;
        }
    pthread_mutex_unlock(&m->lock);
    if (*domain) {
        if (m->net) mb_mail__net_close_domain(m->net, domain);
        /* No user from here on (Dovecot reads the file again within a
         * second), sessions end, the mail goes; and once more when that
         * second has passed, in case a login slipped in. */
        char *dir = mb_mail__domain_dir(m, domain);
        char *pw = mb_asprintf("%s/passwd", dir);
        mb_mail__write_file(pw, "", 0, 0600, NULL);
        free(pw);
        free(dir);
        sweep_domain(m, domain);
        struct mb_mail_sweep *sw = mb_calloc(1, sizeof *sw);
        snprintf(sw->domain, sizeof sw->domain, "%s", domain);
        sw->due = mb_now() + 1.5;
        pthread_mutex_lock(&m->lock);
        sw->next = m->sweeps;
        m->sweeps = sw;
        pthread_cond_broadcast(&m->sweep_cond);
        pthread_mutex_unlock(&m->lock);
        mb_info("mail: sandbox %s no longer owns %s (%.1f ms)", sandbox_id, domain,
                (mb_now() - t0) * 1000);
    }
    char *sock = mb_is_uuid(sandbox_id) ? mb_asprintf("%s/sock/%s", m->root, sandbox_id) : NULL;
    if (sock) {
        mb_err e2;
        mb_rm_rf(sock, &e2);
    }
    free(sock);
}

static json_t *jstr(const char *s)
{
    char *r = mb_utf8_repair(s, strlen(s), NULL);
    json_t *j = json_string(r);
    free(r);
    return j;
}

void mb_mail_reconcile(mb_mail *m)
{
    char *top = mb_asprintf("%s/domains", m->root);
    DIR *d = opendir(top);
    struct dirent *de;
    const char **names = NULL;
    size_t n = 0;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.') mb_strv_push(&names, &n, mb_strdup(de->d_name));
    if (d) closedir(d);
    for (size_t i = 0; i < n; i++) {
        char *dir = mb_asprintf("%s/%s", top, names[i]);
        char *sf = mb_asprintf("%s/sandbox", dir), *id = NULL, holder[37] = "";
        size_t len = 0;
        int live = mb_read_file(sf, 64, &id, &len, NULL) == MB_OK &&
                   mb_store_claim_holder(m->store, MB_MAIL_CLAIM, names[i], holder, NULL) == MB_OK &&
                   !strcmp(holder, id);
        mb_err err = {0};
        if (live && ensure_started(m, &err) == MB_OK) {
            pthread_mutex_lock(&m->lock);
            if (m->doms.n == m->doms.cap) {
                m->doms.cap = m->doms.cap ? m->doms.cap * 2 : 16;
                m->doms.v = mb_realloc(m->doms.v, m->doms.cap * sizeof *m->doms.v);
            }
            snprintf(m->doms.v[m->doms.n].sandbox, 37, "%s", id);
            snprintf(m->doms.v[m->doms.n].domain, MB_MAIL_DOMAIN_MAX + 1, "%s", names[i]);
            m->doms.n++;
            pthread_mutex_unlock(&m->lock);
            char *sock = mb_mail_sandbox_dir(m, id);
            char *imap = sock ? mb_asprintf("%s/imap.sock", sock) : NULL;
            char *smtp = sock ? mb_asprintf("%s/smtp.sock", sock) : NULL;
            if (!sock || mb_mail__net_listen_unix(m->net, imap, names[i], MB_MAIL_L_IMAP, &err) ||
                mb_mail__net_listen_unix(m->net, smtp, names[i], MB_MAIL_L_SMTP, &err))
                mb_warn("mail: %s: %s", names[i], err.msg);
            free(imap);
            free(smtp);
            free(sock);
            mb_info("mail: sandbox %s owns %s again (adopted)", id, names[i]);
        } else {
            if (live) mb_warn("mail: %s of live sandbox %s: %s", names[i], id, err.msg);
            else mb_info("mail: removing %s, whose sandbox was released", names[i]);
            if (!live) mb_rm_rf(dir, NULL);
        }
        free(id);
        free(sf);
        free(dir);
    }
    mb_strv_free((char **)names);
    free(top);
}

void mb_mail__record_outbound(mb_mail *m, const char *domain, const char *from,
                              const char *const *rcpts, size_t n, size_t size)
{
    json_t *o = json_object();
    char ts[40];
    mb_iso8601(mb_now(), ts);
    json_object_set_new(o, "time", json_string(ts));
    json_object_set_new(o, "from", jstr(from));
    json_t *to = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(to, jstr(rcpts[i]));
    json_object_set_new(o, "to", to);
    json_object_set_new(o, "size", json_integer((json_int_t)size));
    char *line = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char local[65], fdom[MB_MAIL_DOMAIN_MAX + 1];
    if (!*domain && !mb_mail__addr_split(from, strlen(from), local, sizeof local, fdom,
                                         sizeof fdom) &&
        mb_mail__domain_owner(m, fdom, NULL) == MB_OK)
        domain = fdom;
    char *path = *domain ? mb_asprintf("%s/domains/%s/outbound.jsonl", m->root, domain)
                         : mb_asprintf("%s/outbound.jsonl", m->root);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        if (line) {
            size_t len = strlen(line);
            line[len] = '\n';
            if (write(fd, line, len + 1) != (ssize_t)(len + 1))
                mb_warn("mail: cannot append to %s", path);
            line[len] = 0;
        }
        close(fd);
    }
    free(path);
    free(line);
}

const char *mb_mail_imap_host(mb_mail *m) { return m->imap_host; }
int mb_mail_imap_port(mb_mail *m) { return m->imap_port; }
int mb_mail_smtp_port(mb_mail *m) { return m->smtp_port; }
