/*
 * dovecot.c - the node's Dovecot: its configuration under DATA/mail (the
 * host's /etc/dovecot is never read: `-c` names ours), the process as a
 * child of the daemon (restarted if it dies), and `doveadm kick` at release.
 *
 * Virtual users come from a passwd-file per domain (M/domains/%d/passwd),
 * read by the auth process at each login, so adding or removing a domain
 * needs no reload. Mail is Maildir++ with '.' as separator, owned by the
 * `dovecot` user (Dovecot refuses uid 0 for mail), and INBOX, Sent, Drafts,
 * Junk and Trash exist from the first login.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

char *mb_mail__lmtp_path(mb_mail *m) { return mb_asprintf("%s/run/lmtp", m->root); }

static char *config_text(mb_mail *m)
{
    const char *u = m->mail_user;
    int root = geteuid() == 0;
    mb_buf b = {0};
    mb_buf_printf(&b,
        "# Written by mcpbox at each start; edits are lost.\n"
        "base_dir = %1$s/run\n"
        "state_dir = %1$s/state\n"
        "instance_name = mcpbox-%2$llx\n"
        "log_path = %1$s/dovecot.log\n"
        "protocols = imap lmtp\n"
        "listen = %3$s\n"
        "ssl = no\n"
        "disable_plaintext_auth = no\n"
        "auth_mechanisms = plain login\n"
        "auth_cache_size = 0\n"
        "auth_failure_delay = 0\n"
        "login_trusted_networks = 127.0.0.0/8\n"
        "login_greeting = Dovecot ready (mcpbox-%2$llx).\n"
        "default_internal_user = %4$s\n"
        "default_internal_group = %4$s\n"
        "default_login_user = %5$s\n"
        "first_valid_uid = %6$u\n"
        "last_valid_uid = %6$u\n"
        "mail_uid = %6$u\n"
        "mail_gid = %7$u\n"
        "mail_location = maildir:~/Maildir\n"
        "mail_fsync = never\n"
        "imap_idle_notify_interval = 30 secs\n"
        "verbose_proctitle = yes\n"
        "namespace inbox {\n"
        "  inbox = yes\n"
        "  separator = .\n"
        "  prefix =\n"
        "  mailbox Sent {\n    auto = subscribe\n    special_use = \\Sent\n  }\n"
        "  mailbox Drafts {\n    auto = subscribe\n    special_use = \\Drafts\n  }\n"
        "  mailbox Junk {\n    auto = subscribe\n    special_use = \\Junk\n  }\n"
        "  mailbox Trash {\n    auto = subscribe\n    special_use = \\Trash\n  }\n"
        "}\n"
        "passdb {\n"
        "  driver = passwd-file\n"
        "  args = scheme=PLAIN username_format=%%Lu %1$s/domains/%%Ld/passwd\n"
        "}\n"
        "userdb {\n"
        "  driver = passwd-file\n"
        "  args = username_format=%%Lu %1$s/domains/%%Ld/passwd\n"
        "  default_fields = uid=%6$u gid=%7$u home=%1$s/domains/%%Ld/users/%%Ln\n"
        "}\n"
        "service imap-login {\n"
        "  inet_listener imap {\n    address = %3$s\n    port = %8$d\n  }\n"
        "  inet_listener imaps {\n    port = 0\n  }\n"
        "  service_count = 0\n"
        "  process_min_avail = 1\n"
        "}\n"
        "service lmtp {\n  unix_listener lmtp {\n    mode = 0600\n  }\n}\n"
        "service auth {\n  user = %9$s\n}\n"
        "service auth-worker {\n  user = %9$s\n}\n"
        "protocol lmtp {\n  mail_fsync = never\n}\n",
        m->root, (unsigned long long)mb_hash_str(m->root), m->imap_host,
        root ? "dovecot" : u, root ? "dovenull" : u, (unsigned)m->mail_uid,
        (unsigned)m->mail_gid, m->imap_port, root ? "root" : u);
    return mb_buf_steal(&b);
}

/* A Dovecot left running by an earlier daemon of this data dir (killed
 * with -9) holds our ports: end it. */
static void end_stale(mb_mail *m)
{
    char *pidf = mb_asprintf("%s/run/master.pid", m->root);
    char *text = NULL;
    size_t len = 0;
    if (mb_read_file(pidf, 64, &text, &len, NULL) == MB_OK) {
        pid_t pid = (pid_t)atol(text);
        char exe[256] = "", *link = mb_asprintf("/proc/%d/exe", (int)pid);
        ssize_t k = pid > 1 ? readlink(link, exe, sizeof exe - 1) : -1;
        if (k > 0) exe[k] = 0;
        free(link);
        if (k > 0 && strstr(exe, "dovecot")) {
            mb_info("mail: ending the Dovecot (pid %d) an earlier mcpbox left running", (int)pid);
            kill(pid, SIGTERM);
            for (int i = 0; i < 100 && kill(pid, 0) == 0; i++) usleep(20000);
            if (kill(pid, 0) == 0) kill(pid, SIGKILL);
        }
        free(text);
    }
    unlink(pidf);
    free(pidf);
}

static pid_t spawn(mb_mail *m, mb_err *err)
{
    char *conf = mb_asprintf("%s/dovecot.conf", m->root);
    char *const argv[] = {m->dovecot_bin, "-F", "-c", conf, NULL};
    posix_spawnattr_t attr;
    mb_spawnattr_init_clean(&attr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    char *out = mb_asprintf("%s/dovecot.log", m->root);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_APPEND | O_CREAT, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = -1;
    int e = posix_spawn(&pid, m->dovecot_bin, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free(out);
    free(conf);
    if (e) {
        mb_err_sys(err, e, "cannot start %s", m->dovecot_bin);
        return -1;
    }
    return pid;
}

/* Waits until Dovecot answers on its IMAP port (or exits). */
static int wait_ready(mb_mail *m, pid_t pid, mb_err *err)
{
    for (int i = 0; i < 500; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            char *log = mb_asprintf("%s/dovecot.log", m->root);
            int rc = mb_err_set(err, MB_EBUSY, "Dovecot exited at start (see %s; is port %s:%d "
                                "taken? --mail-imap chooses another)", log, m->imap_host,
                                m->imap_port);
            free(log);
            return rc;
        }
        mb_err e2;
        int fd = mb_mail__connect_tcp(m->imap_host, m->imap_port, &e2);
        char *lmtp = mb_mail__lmtp_path(m);
        int ok = fd >= 0 && access(lmtp, F_OK) == 0;
        free(lmtp);
        if (ok) { /* ours, not another Dovecot on that port */
            mb_mail_rd *r = mb_calloc(1, sizeof *r);
            r->fd = fd;
            r->timeout_ms = 2000;
            char line[512], *tag = mb_asprintf("(mcpbox-%llx)", (unsigned long long)mb_hash_str(m->root));
            ok = mb_mail__read_line(r, line, sizeof line) > 0 && strstr(line, tag);
            if (!ok) {
                free(tag);
                free(r);
                close(fd);
                kill(pid, SIGTERM);
                return mb_err_set(err, MB_EBUSY, "another server answers on %s:%d "
                                  "(--mail-imap chooses another address)", m->imap_host,
                                  m->imap_port);
            }
            free(tag);
            free(r);
        }
        if (fd >= 0) close(fd);
        if (ok) return MB_OK;
        usleep(10000);
    }
    return mb_err_set(err, MB_ETIMEOUT, "Dovecot did not answer on %s:%d within 5 s",
                      m->imap_host, m->imap_port);
}

static void *supervise(void *arg)
{
    mb_mail *m = arg;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        pid_t pid = m->dovecot_pid;
        pthread_mutex_unlock(&m->lock);
        int st;
        pid_t r = waitpid(pid, &st, 0);
        if (r < 0 && errno == EINTR) continue;
        pthread_mutex_lock(&m->lock);
        if (m->stopping) {
            pthread_mutex_unlock(&m->lock);
            return NULL;
        }
        mb_warn("mail: Dovecot (pid %d) exited (status %d); starting it again", (int)pid, st);
        pthread_mutex_unlock(&m->lock);
        struct timespec ts = {0, 500 * 1000 * 1000};
        nanosleep(&ts, NULL);
        mb_err err = {0};
        end_stale(m);
        pid_t np = spawn(m, &err);
        pthread_mutex_lock(&m->lock);
        if (np < 0 || m->stopping) {
            if (np > 0) {
                kill(np, SIGTERM);
                waitpid(np, &st, 0);
            }
            if (np < 0) mb_error("mail: %s", err.msg);
            m->dovecot_pid = -1;
            pthread_mutex_unlock(&m->lock);
            return NULL;
        }
        m->dovecot_pid = np;
        pthread_mutex_unlock(&m->lock);
    }
}

int mb_mail__dovecot_start(mb_mail *m, mb_err *err)
{
    if (access(m->dovecot_bin, X_OK) != 0)
        return mb_err_set(err, MB_EBUSY, "Dovecot is not installed (%s is missing: "
                          "scripts/install-deps installs dovecot-imapd and dovecot-lmtpd; "
                          "`mcpbox serve --no-mail` runs without mail)", m->dovecot_bin);
    static const char *const dirs[] = {"run", "state", "domains", "sock"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *d = mb_asprintf("%s/%s", m->root, dirs[i]);
        int rc = mb_mkdir_p(d, 0711, err);
        free(d);
        if (rc) return rc;
    }
    char *dom = mb_asprintf("%s/domains", m->root);
    if (chmod(dom, 0711) != 0) mb_warn("mail: cannot chmod %s", dom);
    free(dom);
    /* The mail processes run as mail_uid and must reach the Maildirs. */
    char *probe = mb_asprintf("%s/domains", m->root);
    for (char *p = probe; p && *p;) {
        struct stat st;
        if (stat(probe, &st) == 0 && st.st_uid != m->mail_uid && !(st.st_mode & S_IXOTH)) {
            int rc = mb_err_set(err, MB_EBUSY, "mail homes under %s cannot be reached by user "
                                "%s: %s is mode %04o (give it o+x, or use a data dir whose "
                                "parents are)", m->root, m->mail_user, probe,
                                (unsigned)(st.st_mode & 07777));
            free(probe);
            return rc;
        }
        char *slash = strrchr(probe, '/');
        if (!slash || slash == probe) break;
        *slash = 0;
    }
    free(probe);
    char *conf = config_text(m);
    char *path = mb_asprintf("%s/dovecot.conf", m->root);
    int rc = mb_write_file_atomic(path, conf, strlen(conf), 0644, err);
    free(conf);
    free(path);
    if (rc) return rc;
    end_stale(m);
    pid_t pid = spawn(m, err);
    if (pid < 0) return MB_EBUSY;
    rc = wait_ready(m, pid, err);
    if (rc) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return rc;
    }
    m->dovecot_pid = pid;
    m->stopping = 0;
    if (pthread_create(&m->supervisor, NULL, supervise, m) != 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        m->dovecot_pid = -1;
        return mb_err_set(err, MB_EIO, "cannot start the Dovecot supervisor thread");
    }
    mb_info("mail: Dovecot (pid %d) serves IMAP on %s:%d", (int)pid, m->imap_host, m->imap_port);
    return MB_OK;
}

void mb_mail__dovecot_stop(mb_mail *m)
{
    pthread_mutex_lock(&m->lock);
    m->stopping = 1;
    pid_t pid = m->dovecot_pid;
    pthread_mutex_unlock(&m->lock);
    if (pid > 0) kill(pid, SIGTERM);
    pthread_join(m->supervisor, NULL);
    /* Its children (imap, auth...) end with the master; wait a little so
     * that a restart of the daemon finds the port free. */
    char *pidf = mb_asprintf("%s/run/master.pid", m->root);
    for (int i = 0; i < 100 && access(pidf, F_OK) == 0; i++) usleep(10000);
    free(pidf);
}

void mb_mail__dovecot_kick(mb_mail *m, const char *domain)
{
    char *mask = mb_asprintf("*@%s", domain);
    mb_mail__dovecot_kick_mask(m, mask);
    free(mask);
}

/* Ends the sessions of users matching mask ("*@domain" or "user@domain"):
 * with verbose_proctitle each imap process of this instance is titled
 * "dovecot-mcpbox-HASH/imap [USER IP STATE]", so /proc tells whose it is
 * (what `doveadm kick` does too, without its start-up cost). */
void mb_mail__dovecot_kick_mask(mb_mail *m, const char *mask)
{
    char *prefix = mb_asprintf("dovecot-mcpbox-%llx/", (unsigned long long)mb_hash_str(m->root));
    const char *at = strchr(mask, '@');
    int any_user = mask[0] == '*';
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        if (strncmp(buf, prefix, strlen(prefix)) != 0) continue;
        const char *svc = buf + strlen(prefix);
        if (strncmp(svc, "imap [", 6) != 0 && strncmp(svc, "lmtp [", 6) != 0) continue;
        const char *user = svc + 6, *sp = strchr(user, ' ');
        size_t ul = sp ? (size_t)(sp - user) : strlen(user);
        int match;
        if (any_user) {
            size_t dl = strlen(at);
            match = ul >= dl && !strncasecmp(user + ul - dl, at, dl);
        } else {
            match = ul == strlen(mask) && !strncasecmp(user, mask, ul);
        }
        if (match) kill((pid_t)atol(de->d_name), SIGTERM);
    }
    if (d) closedir(d);
    free(prefix);
}
