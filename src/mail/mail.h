/*
 * mail.h - the face of the mail layer: the node's mail system for the
 * poste_email_toolathlon server (docs/servers/poste_email_toolathlon.md).
 *
 * One Dovecot per node, started by the daemon on first use as its child with
 * its own configuration under DATA/mail (nothing of the host's is touched),
 * serves IMAP to the host on --mail-imap (default 127.0.0.1:1143) and takes
 * deliveries over LMTP on a unix socket. An SMTP front of our own serves the
 * host on --mail-smtp (default 127.0.0.1:1587): recipients in a live
 * sandbox's domain are delivered over LMTP, others are recorded and never
 * relayed.
 *
 * Tenancy: every sandbox that uses the server owns one mail domain
 * (`mcpN.com`, a claim of kind "mail-domain"), with the users of the
 * --mail-users file provisioned in it (a passwd-file per domain: no Dovecot
 * restart). A sandbox has no network but loopback, so it reaches mail only
 * through two unix sockets the daemon serves for it, bound at MB_MAIL_DIR_INSIDE:
 * imap.sock (an IMAP proxy that lets only users of the sandbox's own domain
 * log in) and smtp.sock (the SMTP front, delivering only to that domain).
 *
 * Layout (M = DATA/mail):
 *   M/dovecot.conf, M/dovecot.log    Dovecot's configuration and log
 *   M/run/                          its base_dir (lmtp socket, master.pid)
 *   M/domains/D/passwd              the users of domain D
 *   M/domains/D/sandbox             the id of the sandbox that owns D
 *   M/domains/D/users/U/Maildir/    U's mail (Maildir++, '.' separator)
 *   M/domains/D/outbound.jsonl      mail sent from D to other domains
 *   M/sock/ID/{imap,smtp}.sock      sandbox ID's sockets
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef MB_MAIL_H
#define MB_MAIL_H

#include <jansson.h>

#include "store/store.h"
#include "util/util.h"

#define MB_MAIL_SERVER "poste_email_toolathlon"
#define MB_MAIL_DIR_INSIDE "/mnt/mail"
#define MB_MAIL_CLAIM "mail-domain"

typedef struct mb_mail mb_mail;

typedef struct mb_mail_opts {
    const char *data_dir;     /* required; mail lives in DATA/mail */
    const char *imap_listen;  /* NULL = 127.0.0.1:1143 */
    const char *smtp_listen;  /* NULL = 127.0.0.1:1587 */
    const char *users_file;   /* NULL = no users are provisioned */
    const char *dovecot_bin;  /* NULL = /usr/sbin/dovecot */
    mb_store *store;          /* claims; required */
} mb_mail_opts;

/* Reads the users file; starts nothing (Dovecot and the front start at the
 * first attach). Errors: MB_EINVAL (a malformed users file or address). */
int mb_mail_new(const mb_mail_opts *opts, mb_mail **out, mb_err *err);
/* Closes every socket and connection, stops Dovecot. */
void mb_mail_free(mb_mail *m);

/* Registers the mail layer as the core's node service for
 * poste_email_toolathlon (before the daemon serves). */
struct mb_core;
struct mb_config;
int mb_mail_register(mb_mail *m, struct mb_core *core, mb_err *err);
/* mb_mail_new from serve's configuration (--mail-*), then register. */
int mb_mail_start_for_serve(struct mb_core *core, const struct mb_config *cfg, mb_mail **out,
                            mb_err *err);

/* ---- the life cycle of a sandbox's domain (what the core service calls) */

/* Claims the domain of `email` (or the first free mcpN.com when NULL or
 * empty), provisions its users and opens the sandbox's sockets. Errors:
 * MB_ECONFLICT (another live sandbox holds it), MB_EINVAL (a malformed
 * address), MB_EBUSY (the mail system cannot start). */
int mb_mail_attach(mb_mail *m, const char *sandbox_id, const char *email, mb_err *err);
/* Closes the sandbox's sockets, ends its sessions, removes its users and
 * mail. Idempotent. */
void mb_mail_detach(mb_mail *m, const char *sandbox_id);
/* At start: domains whose sandbox is still live (adopted) get their users
 * and sockets back (Dovecot starts); those of released sandboxes go. */
void mb_mail_reconcile(mb_mail *m);
/* The host directory holding the sandbox's sockets (created), or NULL. */
char *mb_mail_sandbox_dir(mb_mail *m, const char *sandbox_id);
/* The domain sandbox_id owns, copied into out; MB_ENOTFOUND if none. */
int mb_mail_domain(mb_mail *m, const char *sandbox_id, char *out, size_t cap, mb_err *err);

/* ---- Klavis's PosteEmailData (maildir.c) */
/* Each of these runs under the core's lock of the sandbox (reset: the
 * core's reset holds it; initialize and dump: mb_core_with_lock), so that
 * none interleaves with a release that removes the domain's mail. */

/* Replaces the mail of each user the body lists ({users: {email: {emails:
 * [...]}}}; NULL = none) and keeps it as what reset returns to. A body
 * that does not fit gives MB_EINVAL with *detail (a FastAPI 422 list). */
int mb_mail_initialize(mb_mail *m, const char *sandbox_id, json_t *data, json_t **detail,
                       mb_err *err);
/* Every user's mail, {users: {email: {emails: [...]}}}, folders in order. */
int mb_mail_dump(mb_mail *m, const char *sandbox_id, json_t **out, mb_err *err);
/* The domain's mail as the last initialize left it (empty without one). */
int mb_mail_reset(mb_mail *m, const char *sandbox_id, mb_err *err);

/* Host-side addresses for the graders ("127.0.0.1", ports). */
const char *mb_mail_imap_host(mb_mail *m);
int mb_mail_imap_port(mb_mail *m);
int mb_mail_smtp_port(mb_mail *m);

/* ---- reading a message (mime.c) as emails-mcp's email_parser.py does with
 * Python's email package: used by the server's tools and by dump. */
typedef struct mb_mail_att {
    char *filename;
    char *content_type;
    char *data;
    size_t size;
} mb_mail_att;

typedef struct mb_mail_msg {
    char *subject, *from_addr, *to_addr, *cc_addr, *date, *message_id;
    char *body_text, *body_html;
    mb_mail_att *atts;
    size_t n_atts;
    /* every header (name, raw value) in order */
    char **hnames, **hvalues;
    size_t n_headers;
} mb_mail_msg;
void mb_mail_msg_parse(const char *raw, size_t len, mb_mail_msg *m);
void mb_mail_msg_free(mb_mail_msg *m);
/* RFC 2047 decoding as emails-mcp's decode_email_header (then strip). */
char *mb_mail_decode_header(const char *v);

/* Splits "a, B <b@x>" into bare addresses as parse_email_addresses does
 * (NULL-terminated, freed with mb_strv_free). */
char **mb_mail_split_addresses(const char *s);

/* ---- the sandbox side: relays 127.0.0.1:port of the sandbox's network
 * namespace to a socket at MB_MAIL_DIR_INSIDE (from a background thread that
 * lives as long as the process), so that programs inside reach IMAP and SMTP
 * at the ports they would use on the host. */
int mb_mail_forward_start(const char *socket_path, int port, mb_err *err);

#endif /* MB_MAIL_H */
