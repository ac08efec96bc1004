/*
 * poste.h - what the files of the poste_email_toolathlon server share: an
 * IMAP client (imapc.c) shaped after what Python's imaplib reports, the
 * message parser (mime.c) shaped after emails-mcp's email_parser.py, and the
 * message builder and SMTP client (compose.c).
 */
#ifndef MB_SRV_POSTE_H
#define MB_SRV_POSTE_H

#include <jansson.h>

#include "mail/mail.h"
#include "util/util.h"

/* Where IMAP and SMTP are: a unix socket path, or host + port. */
typedef struct pe_endpoint {
    const char *path; /* non-NULL: unix socket */
    const char *host;
    int port;
} pe_endpoint;

/* ---- imapc.c */
/* A connected socket to the endpoint, or -1. */
int pe_endpoint_connect(const pe_endpoint *ep);
typedef struct pe_imap pe_imap;

/* One untagged response: its first line (CRLF cut) and the first literal. */
typedef struct pe_resp {
    char *line;
    char *lit;
    size_t lit_len;
} pe_resp;

typedef struct pe_result {
    char typ[8];      /* OK, NO, BAD */
    char *text;       /* the tagged line's text after the status */
    pe_resp *v;
    size_t n;
} pe_result;
void pe_result_free(pe_result *r);

/* Connects and logs in; on failure *why holds imaplib-like text. */
int pe_imap_open(const pe_endpoint *ep, const char *user, const char *pass, pe_imap **out,
                 char **why);
void pe_imap_close(pe_imap *c);
/* Runs one command ("SELECT", args already formatted, may hold {n+}
 * literals). Returns 0 with *r filled (any status), -1 if the connection
 * failed (*why set). */
int pe_imap_cmd(pe_imap *c, const char *name, const char *args, size_t args_len, pe_result *r,
                char **why);
/* imaplib's error text for a BAD answer: "NAME command error: BAD [b'...']". */
char *pe_imap_bad_text(const char *name, const pe_result *r);
/* A mailbox name as imaplib would send it after emails-mcp's quoting and
 * modified-UTF-7 encoding. */
char *pe_imap_mailbox_arg(const char *name);
/* Python's repr() of bytes. */
void pe_py_bytes_repr(mb_buf *out, const char *s, size_t n);

/* ---- compose.c */
typedef struct pe_out {
    const char *from, *to, *cc, *bcc, *subject, *body, *html, *date, *message_id;
    const char *in_reply_to, *references;
    const char *const *att_paths;
    size_t n_att;
} pe_out;
/* Builds the message (as Python's email.mime would); attachment files are
 * read here. Returns 0, or -1 with *why. */
int pe_compose(const pe_out *o, mb_buf *msg, char **why);
/* Sends over SMTP (EHLO, MAIL, RCPT each, DATA). 0, or -1 with *why. */
int pe_smtp_send(const pe_endpoint *ep, const char *from, const char *const *rcpts, size_t n,
                 const char *msg, size_t len, char **why);
/* A header value as Python's email writes Header(s, 'utf-8') (force) or a
 * str with non-ASCII text (utf-8 encoded words; ASCII as it is). */
void pe_header_word(mb_buf *out, const char *s, int force);
/* Base64 in 76-character lines, as email.encoders writes it. */
void pe_b64_lines(mb_buf *out, const unsigned char *s, size_t n);

/* ---- pyjson.c */
/* Whether Python's json.loads takes s[0..n) (UTF-8): 0 (*nonstd set when it
 * holds NaN or Infinity, which jansson refuses), -1 with *msg the
 * JSONDecodeError's text ("Expecting value: line 1 column 1 (char 0)"), or
 * -2 with *msg a RecursionError's text (nesting too deep). */
int pe_py_json_check(const char *s, size_t n, char **msg, int *nonstd);
/* Text Python reads as s (checked by pe_py_json_check), with NaN and
 * Infinity outside strings written as 1.0 (a float that is true, as they
 * are), for jansson. */
char *pe_py_json_std(const char *s, size_t n, size_t *out_n);

#endif /* MB_SRV_POSTE_H */
