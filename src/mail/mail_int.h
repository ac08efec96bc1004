/*
 * mail_int.h - what the files of the mail layer share; nothing outside
 * src/mail includes it.
 */
#ifndef MB_MAIL_INT_H
#define MB_MAIL_INT_H

#include "mail/mail.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define MB_MAIL_DOMAIN_MAX 254
#define MB_MAIL_ADDR_MAX 320

/* One provisioned user (users.c). */
typedef struct mb_mail_user {
    char *local;     /* lower-case local part */
    char *password;
    char *name;      /* full name, may be "" */
} mb_mail_user;

/* A live domain and the sandbox that owns it (domains.c). */
struct mb_mail_dom {
    char sandbox[37];
    char domain[MB_MAIL_DOMAIN_MAX + 1];
};
struct mb_mail_doms {
    struct mb_mail_dom *v;
    size_t n, cap;
};

struct mb_mail_sweep {
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    double due;
    struct mb_mail_sweep *next;
};

/* Kinds of listener (net.c). */
enum { MB_MAIL_L_IMAP = 1, MB_MAIL_L_SMTP = 2 };

struct mb_mail {
    char *root;            /* DATA/mail, absolute */
    char *dovecot_bin;
    char *imap_host;       /* the host-side IMAP address and port */
    int imap_port;
    char *smtp_host;
    int smtp_port;
    mb_store *store;
    uid_t mail_uid;        /* who owns the Maildirs (dovecot's user, or ours) */
    gid_t mail_gid;
    char *mail_user;       /* that user's name */

    mb_mail_user *users;
    size_t n_users;

    pthread_mutex_t lock;  /* the fields below, and the start */
    int started;           /* Dovecot and the front run */
    char *start_error;     /* why they could not start (then every attach fails) */
    pid_t dovecot_pid;
    pthread_t supervisor;
    int stopping;
    struct mb_mail_net *net;
    struct mb_mail_doms doms;
    /* Released domains swept again once Dovecot's passwd-file cache (one
     * second) has forgotten them (domains.c). */
    struct mb_mail_sweep *sweeps;
    pthread_cond_t sweep_cond;
    pthread_t sweeper;
    int sweeper_on;
    /* Set by mb_mail_register: initialize, dump and reset of a sandbox's mail
     * run under the core's lock of that sandbox (mb_mail__assert_locked). */
    struct mb_core *core;
};

/* service.c: the lock contract of initialize, dump and reset (asserted in
 * test builds; a mail layer without a core, in unit tests, has none). */
void mb_mail__assert_locked(mb_mail *m, const char *sandbox_id);

/* ---- users.c */
int mb_mail__users_load(mb_mail *m, const char *path, mb_err *err);
void mb_mail__users_free(mb_mail *m);
/* The passwd-file of `domain` (one line per user) appended to out. */
void mb_mail__passwd_render(mb_mail *m, const char *domain, mb_buf *out);
/* 1 if `local` (any case) is a provisioned user. */
int mb_mail__user_known(mb_mail *m, const char *local);
/* Lower-cases and checks a domain name (letters, digits, '-', '.'; no
 * leading, trailing or double dot). 0 or MB_EINVAL. */
int mb_mail__domain_norm(const char *in, char *out, size_t cap);
/* Splits "local@domain" (lower-cased); 0 or MB_EINVAL. */
int mb_mail__addr_split(const char *addr, size_t len, char *local, size_t lcap, char *domain,
                        size_t dcap);

/* ---- dovecot.c */
int mb_mail__dovecot_start(mb_mail *m, mb_err *err);
void mb_mail__dovecot_stop(mb_mail *m);
/* Ends every Dovecot session of users of `domain` (doveadm kick). */
void mb_mail__dovecot_kick(mb_mail *m, const char *domain);
/* ... of the users doveadm's mask matches ("user@domain"). */
void mb_mail__dovecot_kick_mask(mb_mail *m, const char *mask);
char *mb_mail__lmtp_path(mb_mail *m);

/* ---- domains.c: the live domains (sandbox -> domain) */
/* The sandbox owning domain, copied into out (37 bytes); 0 or MB_ENOTFOUND. */
int mb_mail__domain_owner(mb_mail *m, const char *domain, char *out);
char *mb_mail__domain_dir(mb_mail *m, const char *domain);
/* Writes a file whole (tmp + rename, no fsync). */
int mb_mail__write_file(const char *path, const void *data, size_t len, mode_t mode,
                        mb_err *err);
/* Appends one JSON line to the record of mail sent off-node. */
void mb_mail__record_outbound(mb_mail *m, const char *domain, const char *from,
                              const char *const *rcpts, size_t n, size_t size);

/* ---- net.c: listeners and connections */
typedef struct mb_mail_net mb_mail_net;
typedef void (*mb_mail_conn_fn)(mb_mail *m, int fd, const char *domain, int kind);
int mb_mail__net_new(mb_mail *m, mb_mail_net **out, mb_err *err);
void mb_mail__net_free(mb_mail_net *n);
/* Listens on a unix socket (mode 0666) or "HOST:PORT" (tcp = 1) for
 * `domain` ("" = the host side: any live domain). */
int mb_mail__net_listen_unix(mb_mail_net *n, const char *path, const char *domain, int kind,
                             mb_err *err);
int mb_mail__net_listen_tcp(mb_mail_net *n, const char *host, int port, int kind, mb_err *err);
/* Closes the listeners and cuts the connections of `domain`. */
void mb_mail__net_close_domain(mb_mail_net *n, const char *domain);
/* A connection's upstream socket, so that close_domain cuts it too. */
void mb_mail__net_track(mb_mail_net *n, int client_fd, int upstream_fd);

/* ---- io helpers (io.c) */
typedef struct mb_mail_rd {
    int fd;
    char buf[16384];
    size_t off, len;
    int timeout_ms;
} mb_mail_rd;
/* Reads a line ending in LF (CRLF kept) into out (NUL-terminated, at most
 * cap - 1 bytes). Returns its length, 0 at EOF, -1 on error/timeout, -2 if
 * longer than cap (then the rest of the line is skipped). */
long mb_mail__read_line(mb_mail_rd *r, char *out, size_t cap);
/* Reads exactly n bytes into b. 0 or -1. */
int mb_mail__read_n(mb_mail_rd *r, mb_buf *b, size_t n);
int mb_mail__write_all(int fd, const void *p, size_t n);
int mb_mail__writes(int fd, const char *s);
/* Relays both ways until either side ends; bytes already buffered in
 * either reader are passed on first. */
void mb_mail__relay(mb_mail_rd *ra, mb_mail_rd *rb);
int mb_mail__connect_tcp(const char *host, int port, mb_err *err);
/* From a chosen loopback source address (NULL = any). */
int mb_mail__connect_tcp_from(const char *host, int port, const char *source, mb_err *err);
int mb_mail__connect_unix(const char *path, mb_err *err);

/* ---- imapproxy.c, smtp.c: one connection each (on its own thread) */
void mb_mail__imap_proxy(mb_mail *m, int fd, const char *domain, int kind);
void mb_mail__smtp_serve(mb_mail *m, int fd, const char *domain, int kind);

#endif /* MB_MAIL_INT_H */
