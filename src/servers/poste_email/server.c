/*
 * server.c - `mcpbox mcp poste_email_toolathlon`: emails-mcp as Klavis hosts
 * it (Klavis-AI/klavis mcp_servers/poste_email_toolathlon @ 669e95dc,
 * FastMCP "emails-mcp"): tool names, docstrings and pydantic schemas as
 * FastMCP lists them, result texts as its tools word them. Message ids are
 * IMAP sequence numbers, newest first; sent mail is APPENDed to Sent.
 *
 * The account: the JSON {email, password, name[, imap_server, imap_port,
 * smtp_server, smtp_port]} in $EMAIL_CONFIG (base64 or plain, the hosted
 * variant's header value), else MB_MAIL_DIR_INSIDE/account.json (the
 * sandbox's test account, written by the daemon). Inside a sandbox IMAP and
 * SMTP are the daemon's sockets in MB_MAIL_DIR_INSIDE, which this process
 * also offers to the agent's programs on 127.0.0.1:1143 and :1587.
 */
#define _GNU_SOURCE
#include "mail/mail.h"
#include "mcp/mcp.h"
#include "servers/common/pyschema.h"
#include "servers/poste_email/poste.h"
#include "servers/servers.h"

#include <ctype.h>
#include <getopt.h>
#include <time.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define PYDANTIC_URL "https://errors.pydantic.dev/2.11/v/"

typedef struct pe_srv {
    char *upload_path, *download_path, *export_path;
} pe_srv;

typedef struct pe_acct {
    char *email, *password, *name;
    pe_endpoint imap, smtp;
    char *imap_host, *smtp_host, *imap_path, *smtp_path;
} pe_acct;

static void acct_free(pe_acct *a)
{
    free(a->email);
    free(a->password);
    free(a->name);
    free(a->imap_host);
    free(a->smtp_host);
    free(a->imap_path);
    free(a->smtp_path);
}

static const char *jstr(json_t *o, const char *k, const char *d)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : d;
}

/* Python's base64.b64decode(s) (not validating): characters outside the
 * alphabet are skipped, the padding must complete the last group. -1 on
 * what Python refuses ("Incorrect padding", a lone last character). */
static int b64_decode_py(const char *s, size_t n, mb_buf *out)
{
    static const char ab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned acc = 0;
    size_t got = 0, pads = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = s[i] ? strchr(ab, s[i]) : NULL;
        if (s[i] == '=') {
            if (got % 4 >= 2) pads++;
            if (got % 4 >= 2 && got % 4 + pads >= 4) break; /* the group is complete */
            continue;
        }
        if (!p) continue;
        acc = acc << 6 | (unsigned)(p - ab);
        if (++got % 4 == 0) {
            mb_buf_putc(out, (char)(acc >> 16));
            mb_buf_putc(out, (char)(acc >> 8 & 0xff));
            mb_buf_putc(out, (char)(acc & 0xff));
            acc = 0;
        }
    }
    size_t r = got % 4;
    if (r == 1 || (r && r + pads < 4)) return -1;
    if (r == 2) mb_buf_putc(out, (char)(acc >> 4));
    if (r == 3) {
        mb_buf_putc(out, (char)(acc >> 10));
        mb_buf_putc(out, (char)(acc >> 2 & 0xff));
    }
    return 0;
}

/* The headers the hosted variant takes the account from: Klavis's local
 * sandbox clients send x-email-config, the server code reads x-auth-data. */
static const char *const ACCT_HEADERS[] = {"x-email-config", "x-auth-data"};
#define BAD_HEADER "Missing or invalid x-auth-data header"

/* The account a request header names, read as upstream's
 * extract_access_token reads it (base64, UTF-8, a JSON object, ports that
 * int() takes): 1 with *out set, 0 when the request has no such header, -1
 * when it has one that is not an account. */
static int header_account(mb_mcp_call *call, json_t **out)
{
    *out = NULL;
    const char *v = NULL;
    for (size_t i = 0; call && !v && i < 2; i++) v = mb_mcp_call_header(call, ACCT_HEADERS[i], NULL);
    if (!v || !*v) return 0;
    mb_buf d = {0};
    json_t *j = NULL;
    if (b64_decode_py(v, strlen(v), &d) == 0 && mb_utf8_valid(d.data ? d.data : "", d.len))
        j = json_loadb(d.data ? d.data : "", d.len, JSON_DECODE_ANY, NULL);
    mb_buf_free(&d);
    int ok = json_is_object(j);
    static const char *const strs[] = {"email", "password", "name", "imap_server", "smtp_server"};
    for (size_t i = 0; ok && i < 5; i++) {
        json_t *f = json_object_get(j, strs[i]);
        if (f && !json_is_string(f)) ok = 0;
    }
    static const char *const ports[] = {"imap_port", "smtp_port"};
    for (size_t i = 0; ok && i < 2; i++) {
        json_t *f = json_object_get(j, ports[i]);
        long long n;
        if (json_is_string(f) && mb_py_int_str(json_string_value(f), &n))
            json_object_set_new(j, ports[i], json_integer(n));
        else if (json_is_real(f))
            json_object_set_new(j, ports[i], json_integer((json_int_t)json_real_value(f)));
        else if (f && !json_is_integer(f) && !json_is_boolean(f))
            ok = 0;
    }
    if (!ok) {
        json_decref(j);
        return -1;
    }
    *out = j;
    return 1;
}

/* The account of a call: the request's x-email-config / x-auth-data header
 * (the hosted variant: one process serves every user of the domain), else
 * $EMAIL_CONFIG (base64 or plain), else the sandbox's test account
 * (MB_MAIL_DIR_INSIDE/account.json, written by the daemon). */
static int acct_load(pe_acct *a, mb_mcp_call *call, char **why)
{
    memset(a, 0, sizeof *a);
    const char *env = getenv("EMAIL_CONFIG");
    json_t *j = NULL;
    int h = header_account(call, &j);
    if (h < 0) {
        *why = mb_strdup(BAD_HEADER);
        return -1;
    }
    if (h > 0) {
        /* from the header */
    } else if (env && *env) {
        j = json_loads(env, 0, NULL);
        if (!j) {
            mb_buf d = {0};
            if (b64_decode_py(env, strlen(env), &d) == 0)
                j = json_loadb(d.data ? d.data : "", d.len, 0, NULL);
            mb_buf_free(&d);
        }
    } else {
        j = json_load_file(MB_MAIL_DIR_INSIDE "/account.json", 0, NULL);
    }
    if (!json_is_object(j)) {
        json_decref(j);
        *why = mb_strdup("Email configuration not found in request context");
        return -1;
    }
    a->email = mb_strdup(jstr(j, "email", ""));
    a->password = mb_strdup(jstr(j, "password", ""));
    a->name = mb_strdup(jstr(j, "name", ""));
    a->imap_host = mb_strdup(jstr(j, "imap_server", "localhost"));
    a->smtp_host = mb_strdup(jstr(j, "smtp_server", "localhost"));
    json_t *ip = json_object_get(j, "imap_port"), *sp = json_object_get(j, "smtp_port");
    a->imap.port = json_is_integer(ip) ? (int)json_integer_value(ip) : 1143;
    a->smtp.port = json_is_integer(sp) ? (int)json_integer_value(sp) : 1587;
    json_decref(j);
    a->imap.host = a->imap_host;
    a->smtp.host = a->smtp_host;
    if (access(MB_MAIL_DIR_INSIDE "/imap.sock", F_OK) == 0) {
        a->imap_path = mb_strdup(MB_MAIL_DIR_INSIDE "/imap.sock");
        a->smtp_path = mb_strdup(MB_MAIL_DIR_INSIDE "/smtp.sock");
        a->imap.path = a->imap_path;
        a->smtp.path = a->smtp_path;
    }
    return 0;
}

/* Every tool call: a header that is not an account is refused before any
 * tool runs, as upstream's HTTP front answers 401 before the MCP layer. */
static int before_call(mb_mcp_call *call, mb_mcp_result *res)
{
    json_t *j;
    int h = header_account(call, &j);
    json_decref(j);
    return h < 0 ? mb_mcp_rpc_error(res, -32001, BAD_HEADER) : 0;
}

/* ---------------------------------------------------------------- args */

typedef struct pe_args {
    const char *tool;
    json_t *a;
    mb_buf msg;
    int errors;
} pe_args;

static void verr(pe_args *v, const char *loc, const char *msg, const char *type, json_t *in)
{
    if (v->msg.len) mb_buf_putc(&v->msg, '\n');
    mb_buf_printf(&v->msg, "%s\n  %s [type=%s, input_value=", loc, msg, type);
    json_t *empty = NULL;
    if (!in) in = empty = json_object();
    mb_py_repr_json(&v->msg, in);
    mb_buf_printf(&v->msg, ", input_type=%s]\n    For further information visit " PYDANTIC_URL "%s",
                  mb_py_type_name(in), type);
    json_decref(empty);
    v->errors++;
}

static json_t *fld(pe_args *v, const char *k) { return json_is_object(v->a) ? json_object_get(v->a, k) : NULL; }

/* str; required, or optional with a default (NULL = None allowed) */
static const char *a_str(pe_args *v, const char *k, int required, const char *dflt)
{
    json_t *x = fld(v, k);
    if (!x) {
        if (required) verr(v, k, "Field required", "missing", v->a);
        return dflt;
    }
    if (json_is_null(x) && !required && !dflt) return NULL;
    if (!json_is_string(x)) {
        verr(v, k, "Input should be a valid string", "string_type", x);
        return dflt;
    }
    return json_string_value(x);
}

static long long a_int(pe_args *v, const char *k, long long dflt)
{
    json_t *x = fld(v, k);
    if (!x) return dflt;
    if (json_is_integer(x)) return json_integer_value(x);
    if (json_is_boolean(x)) return json_is_true(x);
    if (json_is_real(x) && json_real_value(x) == (double)(long long)json_real_value(x))
        return (long long)json_real_value(x);
    long long n;
    if (json_is_string(x) && mb_py_int_str(json_string_value(x), &n)) return n;
    if (json_is_real(x))
        verr(v, k, "Input should be a valid integer, got a number with a fractional part",
             "int_from_float", x);
    else if (json_is_string(x))
        verr(v, k, "Input should be a valid integer, unable to parse string as an integer",
             "int_parsing", x);
    else verr(v, k, "Input should be a valid integer", "int_type", x);
    return dflt;
}

static int a_done(pe_args *v, mb_mcp_result *res);

/* email_id (required) and folder (default INBOX): the one-message tools.
 * Non-zero when validation answered. */
static int a_id_folder(pe_args *v, mb_mcp_result *res, const char **id, const char **folder)
{
    *id = a_str(v, "email_id", 1, "");
    *folder = a_str(v, "folder", 0, "INBOX");
    return a_done(v, res);
}

/* List[str]; *n = -1 when None */
static const char **a_list(pe_args *v, const char *k, int required, long *n)
{
    json_t *x = fld(v, k);
    *n = -1;
    if (!x) {
        if (required) verr(v, k, "Field required", "missing", v->a);
        return NULL;
    }
    if (json_is_null(x) && !required) return NULL;
    if (!json_is_array(x)) {
        verr(v, k, "Input should be a valid list", "list_type", x);
        return NULL;
    }
    size_t m = json_array_size(x);
    const char **out = mb_calloc(m + 1, sizeof *out);
    for (size_t i = 0; i < m; i++) {
        json_t *e = json_array_get(x, i);
        if (!json_is_string(e)) {
            char loc[64];
            snprintf(loc, sizeof loc, "%s.%zu", k, i);
            verr(v, loc, "Input should be a valid string", "string_type", e);
        } else {
            out[i] = json_string_value(e);
        }
    }
    *n = (long)m;
    return out;
}

static int a_done(pe_args *v, mb_mcp_result *res)
{
    if (!v->errors) {
        mb_buf_free(&v->msg);
        return 0;
    }
    int rc = mb_mcp_fail(res, "%d validation error%s for %sArguments\n%s", v->errors,
                         v->errors == 1 ? "" : "s", v->tool, v->msg.data);
    mb_buf_free(&v->msg);
    return rc ? rc : -1;
}

static int reply(mb_mcp_result *res, const char *text)
{
    size_t n;
    char *ok = mb_utf8_repair(text, strlen(text), &n);
    mb_mcp_text_n(res, ok, n);
    json_t *r = json_object();
    json_object_set_new(r, "result", json_stringn(ok, n));
    mb_mcp_structured(res, r);
    free(ok);
    return 0;
}

static int replyf_buf(mb_mcp_result *res, mb_buf *b)
{
    mb_buf_putc(b, 0);
    int rc = reply(res, b->data);
    mb_buf_free(b);
    return rc;
}

/* ------------------------------------------------------- IMAP helpers */

/* One tool call's mailbox: the call's account, its IMAP connection and
 * the answer being written. */
typedef struct sess {
    pe_acct a;
    pe_imap *c;
    char *why;
    char *cur; /* the folder selected in this connection, or NULL */
    mb_buf o;  /* the answer */
} sess;

/* s starts zeroed (sess s = {0}); the answer may be begun before. */
static int sess_open(sess *s, mb_mcp_call *call)
{
    if (acct_load(&s->a, call, &s->why)) return -1;
    return pe_imap_open(&s->a.imap, s->a.email, s->a.password, &s->c, &s->why);
}

static void sess_close(sess *s)
{
    pe_imap_close(s->c);
    acct_free(&s->a);
    free(s->why);
    free(s->cur);
}

/* Ends the call: the connection closes and the answer goes out. */
static int sess_reply(sess *s, mb_mcp_result *res)
{
    sess_close(s);
    return replyf_buf(res, &s->o);
}

/* A command whose BAD answer imaplib raises; *why then set. */
static int run(sess *s, const char *name, const char *args, pe_result *r)
{
    free(s->why);
    s->why = NULL;
    if (pe_imap_cmd(s->c, name, args, args ? strlen(args) : 0, r, &s->why)) return -1;
    if (!strcmp(r->typ, "BAD")) {
        s->why = pe_imap_bad_text(name, r);
        pe_result_free(r);
        return -1;
    }
    return 0;
}

/* select_folder: (total, unread) or -1 with why "Error selecting folder ...". */
static int select_folder(sess *s, const char *folder, long *total, long *unread)
{
    char *mb = pe_imap_mailbox_arg(folder);
    pe_result r;
    free(s->cur);
    s->cur = NULL;
    int rc = run(s, "SELECT", mb, &r);
    free(mb);
    if (rc) {
        char *w = mb_asprintf("Error selecting folder '%s': %s", folder, s->why);
        free(s->why);
        s->why = w;
        return -1;
    }
    if (strcmp(r.typ, "OK") != 0) {
        s->why = mb_asprintf("Error selecting folder '%s': Failed to select folder '%s': %s",
                             folder, folder, r.typ);
        pe_result_free(&r);
        return -1;
    }
    s->cur = mb_strdup(folder);
    *total = 0;
    for (size_t i = 0; i < r.n; i++) {
        long n;
        char w[16];
        if (sscanf(r.v[i].line, "* %ld %15s", &n, w) == 2 && !strcasecmp(w, "EXISTS")) *total = n;
    }
    pe_result_free(&r);
    *unread = 0;
    if (run(s, "SEARCH", "UNSEEN", &r) == 0) {
        for (size_t i = 0; i < r.n; i++)
            if (!strncasecmp(r.v[i].line, "* SEARCH", 8))
                for (char *p = r.v[i].line + 8; *p;) {
                    while (*p == ' ') p++;
                    if (*p) (*unread)++;
                    while (*p && *p != ' ') p++;
                }
        pe_result_free(&r);
    }
    return 0;
}

/* SEARCH results, newest first */
static char **search_ids(sess *s, const char *criteria, size_t len, int *failed)
{
    pe_result r;
    const char **v = NULL;
    size_t n = 0;
    *failed = 0;
    free(s->why);
    s->why = NULL;
    if (pe_imap_cmd(s->c, "SEARCH", criteria, len, &r, &s->why)) {
        *failed = -1;
        return NULL;
    }
    if (strcmp(r.typ, "OK") != 0) {
        *failed = 1;
        s->why = pe_imap_bad_text("SEARCH", &r);
        pe_result_free(&r);
        return NULL;
    }
    for (size_t i = 0; i < r.n; i++)
        if (!strncasecmp(r.v[i].line, "* SEARCH", 8)) {
            char *save = NULL;
            for (char *t = strtok_r(r.v[i].line + 8, " ", &save); t; t = strtok_r(NULL, " ", &save))
                mb_strv_push(&v, &n, mb_strdup(t));
        }
    pe_result_free(&r);
    for (size_t i = 0; i < n / 2; i++) {
        const char *t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    if (!v) v = mb_calloc(1, sizeof *v);
    return (char **)v;
}

/* fetch_email: the parsed message and its flags; -1 with why. */
static int fetch_email(sess *s, const char *id, const char *folder, mb_mail_msg *m, int *seen,
                       int *flagged)
{
    long t, u;
    /* upstream selects the folder again for every message; within one call
     * the folder stays selected, so the answer is the same without it */
    if ((!s->cur || strcmp(s->cur, folder)) && select_folder(s, folder, &t, &u)) return -1;
    char *a = mb_asprintf("%s (RFC822)", id);
    pe_result r;
    int rc = run(s, "FETCH", a, &r);
    free(a);
    if (rc) return -1;
    if (strcmp(r.typ, "OK") != 0) {
        s->why = mb_asprintf("Failed to fetch email content %s: %s", id, r.typ);
        pe_result_free(&r);
        return -1;
    }
    const char *raw = NULL;
    size_t len = 0;
    for (size_t i = 0; i < r.n && !raw; i++)
        if (r.v[i].lit && r.v[i].lit_len) {
            raw = r.v[i].lit;
            len = r.v[i].lit_len;
        }
    pe_result f;
    a = mb_asprintf("%s (FLAGS)", id);
    rc = run(s, "FETCH", a, &f);
    free(a);
    if (rc) {
        pe_result_free(&r);
        return -1;
    }
    *seen = *flagged = 0;
    for (size_t i = 0; i < f.n; i++) {
        const char *fl = strstr(f.v[i].line, "FLAGS (");
        if (fl) {
            const char *e = strchr(fl, ')');
            size_t n = e ? (size_t)(e - fl) : strlen(fl);
            *seen = memmem(fl, n, "\\Seen", 5) != NULL;
            *flagged = memmem(fl, n, "\\Flagged", 8) != NULL;
            break;
        }
    }
    pe_result_free(&f);
    if (!raw) {
        pe_result_free(&r);
        s->why = mb_asprintf("No email content found for email %s", id);
        return -1;
    }
    mb_mail_msg_parse(raw, len, m);
    pe_result_free(&r);
    return 0;
}

/* Opens the call's mailbox and reads one message of it. */
static int sess_fetch(sess *s, mb_mcp_call *call, const char *id, const char *folder,
                      mb_mail_msg *m)
{
    int seen, fl;
    return sess_open(s, call) || fetch_email(s, id, folder, m, &seen, &fl) ? -1 : 0;
}

static int store(sess *s, const char *id, const char *op)
{
    char *a = mb_asprintf("%s %s", id, op);
    pe_result r;
    int rc = run(s, "STORE", a, &r);
    free(a);
    if (rc) return -1;
    int ok = !strcmp(r.typ, "OK");
    pe_result_free(&r);
    if (ok && run(s, "NOOP", NULL, &r) == 0) pe_result_free(&r);
    return ok ? 0 : -1;
}

static int simple(sess *s, const char *name, const char *args)
{
    pe_result r;
    if (run(s, name, args, &r)) return -1;
    int ok = !strcmp(r.typ, "OK");
    if (!ok) s->why = mb_asprintf("%s", r.typ);
    pe_result_free(&r);
    return ok ? 0 : 1;
}

/* ------------------------------------------------------------- tools */

static int page_fix(long long *page, long long *size)
{
    if (*page < 1) *page = 1;
    if (*size < 1) *size = 20;
    if (*size > 50) *size = 50;
    return 0;
}

static void list_lines(mb_buf *o, sess *s, char **ids, size_t from, size_t cnt,
                       const char *folder, long long page, long long psize, int atts)
{
    size_t k = 0;
    for (size_t i = from; ids[i] && k < cnt; i++, k++) {
        mb_mail_msg m;
        int seen, fl;
        if (fetch_email(s, ids[i], folder, &m, &seen, &fl)) continue;
        mb_buf_printf(o, "%lld. ID: %s\n   Subject: %s\n   From: %s\n   Date: %s\n",
                      (page - 1) * psize + (long long)k + 1, ids[i], m.subject, m.from_addr, m.date);
        if (atts && m.n_atts) mb_buf_printf(o, "   Attachments: %zu files\n", m.n_atts);
        mb_buf_putc(o, '\n');
        mb_mail_msg_free(&m);
    }
}

static int t_get_emails(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "get_emails", .a = j};
    const char *folder = a_str(&v, "folder", 0, "INBOX");
    long long page = a_int(&v, "page", 1), psize = a_int(&v, "page_size", 20);
    if (a_done(&v, res)) return MB_OK;
    page_fix(&page, &psize);
    sess s = {0};
    long total = 0, unread;
    if (sess_open(&s, call) || select_folder(&s, folder, &total, &unread)) {
        mb_buf_printf(&s.o, "Error getting emails: Failed to get emails: %s", s.why);
    } else if (!total) {
        mb_buf_printf(&s.o, "Folder '%s' is empty or page %lld is out of range", folder, page);
    } else {
        long long pages = (total + psize - 1) / psize;
        if (page > pages) page = pages;
        int failed;
        char **ids = search_ids(&s, "ALL", 3, &failed);
        if (!ids) {
            mb_buf_printf(&s.o, "Error getting emails: Failed to get emails: Error getting email "
                          "IDs: %s", s.why);
        } else {
            mb_buf_printf(&s.o, "Folder: %s\nPage: %lld/%lld\nTotal emails: %ld\n\n", folder, page,
                          pages, total);
            size_t n = mb_strv_len((const char *const *)ids), from = (size_t)((page - 1) * psize);
            if (from < n) list_lines(&s.o, &s, ids, from, (size_t)psize, folder, page, psize, 1);
            mb_strv_free(ids);
        }
    }
    return sess_reply(&s, res);
}

static int t_read_email(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "read_email", .a = j};
    const char *id, *folder;
    if (a_id_folder(&v, res, &id, &folder)) return MB_OK;
    sess s = {0};
    mb_mail_msg m;
    if (sess_fetch(&s, call, id, folder, &m)) {
        mb_buf_printf(&s.o, "Error reading email: Failed to read email %s: %s", id, s.why);
    } else {
        long t, u;
        if (select_folder(&s, folder, &t, &u) == 0) store(&s, id, "+FLAGS \\Seen");
        mb_buf_printf(&s.o, "Email ID: %s\nSubject: %s\nFrom: %s\nTo: %s\n", id, m.subject,
                      m.from_addr, m.to_addr);
        if (m.cc_addr) mb_buf_printf(&s.o, "CC: %s\n", m.cc_addr);
        mb_buf_printf(&s.o, "Date: %s\nMessage-ID: %s\n\n", m.date, m.message_id);
        if (*m.body_text) mb_buf_printf(&s.o, "Text Content:\n%s\n\n", m.body_text);
        if (*m.body_html) mb_buf_printf(&s.o, "HTML Content:\n%s\n\n", m.body_html);
        if (m.n_atts) {
            mb_buf_puts(&s.o, "Attachments:\n");
            for (size_t i = 0; i < m.n_atts; i++)
                mb_buf_printf(&s.o, "%zu. %s (%s, %zu bytes)\n", i + 1, m.atts[i].filename,
                              m.atts[i].content_type, m.atts[i].size);
        }
        mb_mail_msg_free(&m);
    }
    return sess_reply(&s, res);
}

static int t_search_emails(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "search_emails", .a = j};
    const char *q = a_str(&v, "query", 1, "");
    const char *folder = a_str(&v, "folder", 0, "INBOX");
    long long page = a_int(&v, "page", 1), psize = a_int(&v, "page_size", 20);
    if (a_done(&v, res)) return MB_OK;
    page_fix(&page, &psize);
    size_t ql = strlen(q);
    while (ql && (q[ql - 1] == ' ' || q[ql - 1] == '\t' || q[ql - 1] == '\n')) ql--;
    const char *qs = q;
    while (*qs == ' ' || *qs == '\t' || *qs == '\n') qs++, ql = ql ? ql - 1 : 0;
    if (!*qs)
        return reply(res, "Error searching emails: Failed to search emails: Search query cannot "
                          "be empty");
    sess s = {0};
    long t, u;
    if (sess_open(&s, call) || select_folder(&s, folder, &t, &u)) {
        mb_buf_printf(&s.o, "Error searching emails: Failed to search emails: %s", s.why);
    } else {
        /* imaplib puts the bytes in a quoted string as they are */
        mb_buf c = {0};
        mb_buf_printf(&c, "CHARSET UTF-8 TEXT \"%s\"", q);
        int failed;
        char **ids = search_ids(&s, c.data, c.len, &failed);
        mb_buf_free(&c);
        if (!ids && failed >= 0) { /* the ASCII fallback */
            mb_buf aq = {0};
            for (const char *p = q; *p; p++)
                if ((unsigned char)*p < 0x80) mb_buf_putc(&aq, *p);
            mb_buf_putc(&aq, 0);
            int blank = 1;
            for (const char *p = aq.data; *p; p++)
                if (*p != ' ' && *p != '\t' && *p != '\n') blank = 0;
            if (blank) {
                ids = mb_calloc(1, sizeof *ids);
            } else {
                mb_buf_printf(&c, "(OR SUBJECT \"%s\" FROM \"%s\" BODY \"%s\")", aq.data, aq.data,
                              aq.data);
                ids = search_ids(&s, c.data, c.len, &failed);
                mb_buf_free(&c);
                if (!ids && failed > 0 && !strncmp(s.why, "SEARCH command error: NO", 24)) {
                    free(s.why);
                    s.why = mb_strdup("Search failed: NO");
                }
            }
            mb_buf_free(&aq);
        }
        if (!ids) {
            mb_buf_printf(&s.o, "Error searching emails: Failed to search emails: Error searching "
                          "emails: %s", s.why);
        } else if (!ids[0]) {
            mb_buf_printf(&s.o, "No emails found matching query: %s", q);
        } else {
            size_t n = mb_strv_len((const char *const *)ids);
            long long pages = ((long long)n + psize - 1) / psize;
            if (page > pages) page = pages;
            mb_buf_printf(&s.o, "Search query: %s\nFolder: %s\nPage: %lld/%lld\nTotal results: "
                          "%zu\n\n", q, *folder ? folder : "current", page, pages, n);
            /* upstream fetches the hits from INBOX whatever the folder */
            list_lines(&s.o, &s, ids, (size_t)((page - 1) * psize), (size_t)psize, "INBOX", page,
                       psize, 0);
        }
        mb_strv_free(ids);
    }
    return sess_reply(&s, res);
}

/* validate_email_address of emails-mcp's validators.py */
static int addr_ok(const char *e)
{
    const char *at = strrchr(e, '@');
    if (!at || at == e || at - e > 64) return 0;
    for (const char *p = e; p < at; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-", *p))
            return 0;
    if (*e == '.' || at[-1] == '.' || memmem(e, (size_t)(at - e), "..", 2)) return 0;
    const char *d = at + 1;
    size_t dl = strlen(d);
    if (!dl || dl > 255 || !strchr(d, '.')) return 0;
    const char *last = d;
    for (const char *p = d;; p++) {
        if (*p == '.' || !*p) {
            size_t pl = (size_t)(p - last);
            if (!pl || pl > 63) return 0;
            for (const char *x = last; x < p; x++)
                if (!((unsigned char)*x >= 0x80 || strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-", *x)))
                    return 0;
            if (!*p) return pl >= 2;
            last = p + 1;
        }
    }
}

/* validate_email_list: NULL if fine, else the message. */
static char *list_bad(const char *s)
{
    if (!s || !*s) return mb_strdup("Email list cannot be empty");
    mb_buf bad = {0};
    char *copy = mb_strdup(s), *save = NULL;
    const char *p = copy;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        while (n && (*p == ' ' || *p == '\t' || *p == '\n')) p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n')) n--;
        char *one = mb_strndup(p, n);
        if (!addr_ok(one)) mb_buf_printf(&bad, "%s%s", bad.len ? ", " : "", one);
        free(one);
        if (!comma) break;
        p = comma + 1;
    }
    (void)save;
    free(copy);
    if (!bad.len) return NULL;
    mb_buf_putc(&bad, 0);
    char *r = mb_asprintf("Invalid email addresses: %s", bad.data);
    mb_buf_free(&bad);
    return r;
}

static void push_split(const char ***v, size_t *n, const char *s)
{
    if (!s || !*s) return;
    char *copy = mb_strdup(s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        size_t l = strlen(t);
        while (l && t[l - 1] == ' ') t[--l] = 0;
        mb_strv_push(v, n, mb_strdup(t));
    }
    free(copy);
}

/* Attachments must exist and lie under --attachment_upload_path. */
static char *att_check(const pe_srv *sv, const char *path)
{
    if (!*path) return mb_strdup("Attachment error: File path cannot be empty");
    char *real = realpath(path, NULL);
    if (!real) return mb_asprintf("Attachment error: File does not exist: %s", path);
    struct stat st;
    char *r = NULL;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        r = mb_asprintf("Attachment error: Path is not a file: %s", path);
    if (!r && sv->upload_path) {
        char *root = realpath(sv->upload_path, NULL);
        size_t rl = root ? strlen(root) : 0;
        if (!root || strncmp(real, root, rl) != 0 || (real[rl] != '/' && real[rl] != 0))
            r = mb_asprintf("Attachment path validation failed: Error: Path '%s' is outside "
                            "attachment upload path '%s'", path, root ? root : sv->upload_path);
        free(root);
    }
    free(real);
    return r;
}

/* EmailService.send_email: validate, build, send, keep a \Seen copy in the
 * first Sent folder that takes it. NULL, or the error text after
 * "Failed to send email: ". */
static char *send_common(const pe_srv *sv, const pe_acct *a, const char *to, const char *subject,
                         const char *body, const char *html, const char *cc, const char *bcc,
                         const char *const *att, size_t n_att)
{
    char *bad = list_bad(to), *why = NULL, *inner = NULL;
    if (bad) why = mb_asprintf("Invalid TO addresses: %s", bad);
    else if (cc && *cc && (bad = list_bad(cc))) why = mb_asprintf("Invalid CC addresses: %s", bad);
    else if (bcc && *bcc && (bad = list_bad(bcc)))
        why = mb_asprintf("Invalid BCC addresses: %s", bad);
    free(bad);
    if (why) return why;
    int fd = pe_endpoint_connect(&a->smtp);
    if (fd < 0)
        return mb_asprintf("SMTP connection failed: [Errno 111] Connection refused");
    close(fd);
    for (size_t i = 0; !inner && i < n_att; i++) inner = att_check(sv, att[i]);
    mb_buf msg = {0};
    if (!inner) {
        char *from = *a->name ? mb_asprintf("%s <%s>", a->name, a->email) : mb_strdup(a->email);
        pe_out out = {.from = from, .to = to, .cc = cc, .bcc = bcc, .subject = subject,
                      .body = body, .html = html, .att_paths = att, .n_att = n_att};
        if (!pe_compose(&out, &msg, &inner)) {
            const char **rc = NULL;
            size_t nr = 0;
            push_split(&rc, &nr, to);
            push_split(&rc, &nr, cc);
            push_split(&rc, &nr, bcc);
            char *w = NULL;
            if (pe_smtp_send(&a->smtp, a->email, rc, nr, msg.data, msg.len, &w)) {
                /* pe_smtp_send words it "Failed to send email: ..." already */
                why = w;
            } else {
                static const char *const sent[] = {"Sent", "INBOX.Sent", "Sent Messages",
                                                   "Sent Items"};
                pe_imap *c = NULL;
                char *w2 = NULL;
                if (!pe_imap_open(&a->imap, a->email, a->password, &c, &w2)) {
                    for (size_t i = 0; i < 4; i++) {
                        char *mb = pe_imap_mailbox_arg(sent[i]);
                        mb_buf ap = {0};
                        mb_buf_printf(&ap, "%s (\\Seen) {%zu+}\r\n", mb, msg.len);
                        mb_buf_append(&ap, msg.data, msg.len);
                        free(mb);
                        pe_result r;
                        char *w3 = NULL;
                        int ok = pe_imap_cmd(c, "APPEND", ap.data, ap.len, &r, &w3) == 0;
                        if (ok) {
                            ok = !strcmp(r.typ, "OK");
                            pe_result_free(&r);
                        }
                        free(w3);
                        mb_buf_free(&ap);
                        if (ok) break;
                    }
                    pe_imap_close(c);
                }
                free(w2);
            }
            mb_strv_free((char **)rc);
        }
        free(from);
    }
    if (inner && !why) why = mb_asprintf("Failed to send email: %s", inner);
    free(inner);
    mb_buf_free(&msg);
    return why;
}

static int t_send_email(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_srv *sv = mb_mcp_call_data(call);
    pe_args v = {.tool = "send_email", .a = j};
    const char *to = a_str(&v, "to", 1, "");
    const char *subject = a_str(&v, "subject", 1, "");
    const char *body = a_str(&v, "body", 1, "");
    const char *html = a_str(&v, "html_body", 0, NULL);
    const char *cc = a_str(&v, "cc", 0, NULL);
    const char *bcc = a_str(&v, "bcc", 0, NULL);
    long n_att;
    const char **att = a_list(&v, "attachments", 0, &n_att);
    if (a_done(&v, res)) {
        free(att);
        return MB_OK;
    }
    mb_buf o = {0};
    pe_acct a;
    char *why = NULL;
    if (acct_load(&a, call, &why) == 0) {
        why = send_common(sv, &a, to, subject, body, html, cc, bcc, att,
                          n_att > 0 ? (size_t)n_att : 0);
        acct_free(&a);
    }
    if (why) mb_buf_printf(&o, "Error sending email: Failed to send email: %s", why);
    else if (n_att > 0) mb_buf_printf(&o, "Email sent successfully to %s with %ld attachments", to, n_att);
    else mb_buf_printf(&o, "Email sent successfully to %s", to);
    free(why);
    free(att);
    return replyf_buf(res, &o);
}

/* reply_email and forward_email */
static int t_reply_forward(mb_mcp_call *call, json_t *j, mb_mcp_result *res, int fwd)
{
    pe_srv *sv = mb_mcp_call_data(call);
    pe_args v = {.tool = fwd ? "forward_email" : "reply_email", .a = j};
    const char *id = a_str(&v, "email_id", 1, "");
    const char *to = fwd ? a_str(&v, "to", 1, "") : NULL;
    const char *body = a_str(&v, "body", !fwd, fwd ? NULL : "");
    const char *html = a_str(&v, "html_body", 0, NULL);
    const char *cc = a_str(&v, "cc", 0, NULL);
    const char *bcc = a_str(&v, "bcc", 0, NULL);
    int all = 0;
    if (!fwd) {
        json_t *x = json_is_object(j) ? json_object_get(j, "reply_all") : NULL;
        if (x && !mb_py_lax_bool(x, 1, &all))
            verr(&v, "reply_all", json_is_string(x) ? "Input should be a valid boolean, unable "
                 "to interpret input" : "Input should be a valid boolean",
                 json_is_string(x) ? "bool_parsing" : "bool_type", x);
    }
    const char *folder = a_str(&v, "folder", 0, "INBOX");
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    mb_mail_msg m;
    const char *what = fwd ? "forwarding" : "replying to";
    const char *fail = fwd ? "Failed to forward email" : "Failed to reply to email";
    if (sess_fetch(&s, call, id, folder, &m)) {
        mb_buf_printf(&s.o, "Error %s email: %s: %s", what, fail, s.why);
        return sess_reply(&s, res);
    }
    mb_buf b = {0}, h = {0}, subj = {0}, ccb = {0};
    char *why = NULL;
    const char *pfx = fwd ? "Fwd:" : "Re:";
    if (!strncmp(m.subject, pfx, strlen(pfx))) mb_buf_puts(&subj, m.subject);
    else mb_buf_printf(&subj, "%s %s", pfx, m.subject);
    mb_buf_putc(&subj, 0);
    if (!fwd) {
        mb_buf_printf(&b, "%s\n\n--- Original Message ---\nFrom: %s\nDate: %s\nSubject: %s\n\n%s",
                      body, m.from_addr, m.date, m.subject, m.body_text);
        if (html && *html)
            mb_buf_printf(&h, "%s<br><br><hr><b>Original Message:</b><br>From: %s<br>Date: %s<br>"
                          "Subject: %s<br><br>%s", html, m.from_addr, m.date, m.subject,
                          *m.body_html ? m.body_html : m.body_text);
        const char *reply_cc = cc;
        if (all) {
            const char **rs = NULL;
            size_t nr = 0;
            push_split(&rs, &nr, m.to_addr);
            push_split(&rs, &nr, m.cc_addr);
            char *me = mb_strdup(s.a.email);
            for (char *p = me; *p; p++) *p = (char)tolower((unsigned char)*p);
            for (size_t i = 0; i < nr; i++) {
                char *low = mb_strdup(rs[i]);
                for (char *p = low; *p; p++) *p = (char)tolower((unsigned char)*p);
                if (!strstr(low, me)) mb_buf_printf(&ccb, "%s%s", ccb.len ? "," : "", rs[i]);
                free(low);
            }
            free(me);
            mb_strv_free((char **)rs);
            mb_buf_putc(&ccb, 0);
            if (ccb.len > 1) reply_cc = ccb.data;
        }
        mb_buf_putc(&b, 0);
        mb_buf_putc(&h, 0);
        why = send_common(sv, &s.a, m.from_addr, subj.data, b.data, h.len > 1 ? h.data : NULL,
                          reply_cc, bcc, NULL, 0);
    } else {
        mb_buf_printf(&b, "%s\n\n--- Forwarded Message ---\nFrom: %s\nTo: %s\nDate: %s\nSubject: "
                      "%s\n\n%s", body ? body : "", m.from_addr, m.to_addr, m.date, m.subject,
                      m.body_text);
        if ((html && *html) || *m.body_html)
            mb_buf_printf(&h, "%s<br><br><hr><b>Forwarded Message:</b><br>From: %s<br>To: %s<br>"
                          "Date: %s<br>Subject: %s<br><br>%s", html ? html : "", m.from_addr,
                          m.to_addr, m.date, m.subject, *m.body_html ? m.body_html : m.body_text);
        mb_buf_putc(&b, 0);
        mb_buf_putc(&h, 0);
        /* the original's attachments go through temporary files, as upstream */
        const char **paths = mb_calloc(m.n_atts + 1, sizeof *paths);
        size_t np = 0;
        char tmpl[] = "/tmp/pe_fwd_XXXXXX";
        char *dir = m.n_atts ? mkdtemp(tmpl) : NULL;
        for (size_t i = 0; dir && i < m.n_atts; i++) {
            if (!m.atts[i].size) continue;
            const char *base = strrchr(m.atts[i].filename, '/');
            char *p = mb_asprintf("%s/%s", dir, base ? base + 1 : m.atts[i].filename);
            if (mb_write_file_atomic(p, m.atts[i].data, m.atts[i].size, 0600, NULL) == MB_OK)
                paths[np++] = p;
            else free(p);
        }
        why = send_common(sv, &s.a, to, subj.data, b.data, h.len > 1 ? h.data : NULL, cc, bcc,
                          paths, np);
        for (size_t i = 0; i < np; i++) {
            unlink(paths[i]);
            free((char *)paths[i]);
        }
        if (dir) rmdir(dir);
        free(paths);
    }
    if (why)
        mb_buf_printf(&s.o, "Error %s email: %s: %sFailed to send email: %s", what, fail,
                      fwd ? "Failed to send email with original attachments: " : "", why);
    else if (fwd) mb_buf_printf(&s.o, "Email forwarded successfully to %s", to);
    else mb_buf_printf(&s.o, "Reply sent successfully to %s", all ? "all recipients" : "sender");
    free(why);
    mb_buf_free(&b);
    mb_buf_free(&h);
    mb_buf_free(&subj);
    mb_buf_free(&ccb);
    mb_mail_msg_free(&m);
    return sess_reply(&s, res);
}

static int t_reply_email(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return t_reply_forward(c, j, r, 0); }
static int t_forward_email(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return t_reply_forward(c, j, r, 1); }

/* Drafts live in a DraftService made for each request (create_services),
 * so as Klavis hosts the server no draft outlives the call that saved it. */
static int t_save_draft(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)call;
    pe_args v = {.tool = "save_draft", .a = j};
    a_str(&v, "subject", 1, "");
    a_str(&v, "body", 1, "");
    a_str(&v, "html_body", 0, NULL);
    a_str(&v, "to", 0, NULL);
    a_str(&v, "cc", 0, NULL);
    a_str(&v, "bcc", 0, NULL);
    if (a_done(&v, res)) return MB_OK;
    return reply(res, "Draft saved successfully with ID: draft_1");
}

static int t_get_drafts(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)call;
    pe_args v = {.tool = "get_drafts", .a = j};
    a_int(&v, "page", 1);
    a_int(&v, "page_size", 20);
    if (a_done(&v, res)) return MB_OK;
    return reply(res, "No drafts found");
}

static int t_update_draft(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)call;
    pe_args v = {.tool = "update_draft", .a = j};
    const char *id = a_str(&v, "draft_id", 1, "");
    static const char *const opt[] = {"subject", "body", "html_body", "to", "cc", "bcc"};
    for (size_t i = 0; i < 6; i++) a_str(&v, opt[i], 0, NULL);
    if (a_done(&v, res)) return MB_OK;
    mb_buf o = {0};
    mb_buf_printf(&o, "Error updating draft: Draft not found: %s", id);
    return replyf_buf(res, &o);
}

static int t_delete_draft(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)call;
    pe_args v = {.tool = "delete_draft", .a = j};
    const char *id = a_str(&v, "draft_id", 1, "");
    if (a_done(&v, res)) return MB_OK;
    mb_buf o = {0};
    mb_buf_printf(&o, "Error deleting draft: Draft not found: %s", id);
    return replyf_buf(res, &o);
}

static int t_delete_email(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "delete_email", .a = j};
    const char *id, *folder;
    if (a_id_folder(&v, res, &id, &folder)) return MB_OK;
    sess s = {0};
    long t, u;
    pe_result r;
    char *a = mb_asprintf("%s +FLAGS \\Deleted", id);
    if (sess_open(&s, call) || select_folder(&s, folder, &t, &u) || run(&s, "STORE", a, &r)) {
        mb_buf_printf(&s.o, "Error deleting email: Failed to delete email %s: Failed to delete "
                      "email: %s", id, s.why);
    } else {
        pe_result_free(&r);
        if (run(&s, "EXPUNGE", NULL, &r) == 0) pe_result_free(&r);
        mb_buf_printf(&s.o, "Email %s deleted successfully", id);
    }
    free(a);
    return sess_reply(&s, res);
}

/* move_email of the backend: FETCH FLAGS, COPY, STORE \Deleted, EXPUNGE. */
static int move_one(sess *s, const char *id, const char *target, const char *source)
{
    long t, u;
    if (select_folder(s, source, &t, &u)) return -1;
    pe_result r;
    char *a = mb_asprintf("%s (FLAGS)", id);
    int rc = run(s, "FETCH", a, &r);
    free(a);
    if (rc) return -1;
    pe_result_free(&r);
    char *mb = pe_imap_mailbox_arg(target);
    a = mb_asprintf("%s %s", id, mb);
    free(mb);
    rc = run(s, "COPY", a, &r);
    free(a);
    if (rc) return -1;
    if (strcmp(r.typ, "OK") != 0) {
        mb_buf b = {0};
        pe_py_bytes_repr(&b, r.text, strlen(r.text));
        s->why = mb_asprintf("Failed to copy email to %s: [%s]", target, b.data);
        mb_buf_free(&b);
        pe_result_free(&r);
        return -1;
    }
    pe_result_free(&r);
    a = mb_asprintf("%s +FLAGS \\Deleted", id);
    if (run(s, "STORE", a, &r) == 0) pe_result_free(&r);
    free(a);
    if (run(s, "EXPUNGE", NULL, &r) == 0) pe_result_free(&r);
    return 0;
}

static int t_move_email(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "move_email", .a = j};
    const char *id = a_str(&v, "email_id", 1, "");
    const char *target = a_str(&v, "target_folder", 1, "");
    const char *source = a_str(&v, "source_folder", 0, "INBOX");
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    if (sess_open(&s, call) || move_one(&s, id, target, source))
        mb_buf_printf(&s.o, "Error moving email: Failed to move email %s: Failed to move email: %s",
                      id, s.why);
    else mb_buf_printf(&s.o, "Email %s moved to %s successfully", id, target);
    return sess_reply(&s, res);
}

static int t_mark_emails(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "mark_emails", .a = j};
    long n;
    const char **ids = a_list(&v, "email_ids", 1, &n);
    const char *status = a_str(&v, "status", 1, "");
    const char *folder = a_str(&v, "folder", 0, "INBOX");
    if (a_done(&v, res)) {
        free(ids);
        return MB_OK;
    }
    static const char *const st[] = {"read", "unread", "important", "not_important"};
    static const char *const op[] = {"+FLAGS \\Seen", "-FLAGS \\Seen", "+FLAGS \\Flagged",
                                     "-FLAGS \\Flagged"};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(status, st[i])) k = i;
    if (k < 0) {
        free(ids);
        return reply(res, "Error: Status must be 'read', 'unread', 'important', or "
                          "'not_important'");
    }
    sess s = {0};
    long ok = 0;
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error marking emails: Failed to mark emails: %s", s.why);
    } else {
        for (long i = 0; i < n; i++) {
            long t, u;
            if (select_folder(&s, folder, &t, &u) == 0 && store(&s, ids[i], op[k]) == 0) ok++;
        }
        mb_buf_printf(&s.o, "Successfully marked %ld/%ld emails as %s", ok, n, status);
    }
    free(ids);
    return sess_reply(&s, res);
}

/* move_emails / delete_emails: highest ids first, each checked first. */
static int bulk(mb_mcp_call *call, json_t *j, mb_mcp_result *res, int move)
{
    pe_args v = {.tool = move ? "move_emails" : "delete_emails", .a = j};
    long n;
    const char **ids = a_list(&v, "email_ids", 1, &n);
    const char *target = move ? a_str(&v, "target_folder", 1, "") : NULL;
    const char *folder = a_str(&v, move ? "source_folder" : "folder", 0, "INBOX");
    if (a_done(&v, res)) {
        free(ids);
        return MB_OK;
    }
    const char **sorted = mb_calloc((size_t)n + 1, sizeof *sorted);
    memcpy(sorted, ids, (size_t)n * sizeof *ids);
    /* sorted(key=int if digits else 0, reverse=True), stable */
    for (long i = 1; i < n; i++)
        for (long k = i; k > 0; k--) {
            long long a = 0, b = 0;
            if (!mb_py_int_str(sorted[k - 1], &a) || strspn(sorted[k - 1], "0123456789") != strlen(sorted[k - 1])) a = 0;
            if (!mb_py_int_str(sorted[k], &b) || strspn(sorted[k], "0123456789") != strlen(sorted[k])) b = 0;
            if (b > a) {
                const char *t = sorted[k];
                sorted[k] = sorted[k - 1];
                sorted[k - 1] = t;
            } else break;
        }
    sess s = {0};
    mb_buf failed = {0};
    long ok = 0, nf = 0;
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error %s emails: %s", move ? "moving" : "deleting", s.why);
    } else {
        for (long i = 0; i < n; i++) {
            int done = 0;
            /* _check_email_exists: FETCH FLAGS in INBOX */
            long t, u;
            pe_result r;
            char *a = mb_asprintf("%s (FLAGS)", sorted[i]);
            int exists = select_folder(&s, "INBOX", &t, &u) == 0 && run(&s, "FETCH", a, &r) == 0;
            if (exists) {
                exists = !strcmp(r.typ, "OK") && r.n > 0;
                pe_result_free(&r);
            }
            free(a);
            if (exists) {
                if (move) done = move_one(&s, sorted[i], target, folder) == 0;
                else {
                    char *st = mb_asprintf("%s +FLAGS \\Deleted", sorted[i]);
                    done = select_folder(&s, folder, &t, &u) == 0 && run(&s, "STORE", st, &r) == 0;
                    if (done) {
                        pe_result_free(&r);
                        if (run(&s, "EXPUNGE", NULL, &r) == 0) pe_result_free(&r);
                    }
                    free(st);
                }
            }
            if (done) ok++;
            else {
                if (nf < 5) mb_buf_printf(&failed, "%s%s", nf ? ", " : "", sorted[i]);
                nf++;
            }
        }
        if (move) mb_buf_printf(&s.o, "Successfully moved %ld/%ld emails to %s", ok, n, target);
        else mb_buf_printf(&s.o, "Successfully deleted %ld/%ld emails", ok, n);
        if (nf) {
            mb_buf_printf(&s.o, " (%ld failed: %s", nf, failed.data);
            if (nf > 5) mb_buf_printf(&s.o, " and %ld more", nf - 5);
            mb_buf_putc(&s.o, ')');
        }
    }
    mb_buf_free(&failed);
    free(sorted);
    free(ids);
    return sess_reply(&s, res);
}

static int t_move_emails(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return bulk(c, j, r, 1); }
static int t_delete_emails(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return bulk(c, j, r, 0); }

typedef struct folder_info {
    char *name;
    int selectable;
    long total, unread;
} folder_info;

static int list_folders(sess *s, folder_info **out, size_t *n)
{
    pe_result r;
    *out = NULL;
    *n = 0;
    if (run(s, "LIST", "\"\" *", &r)) return -1;
    char **names = mb_calloc(r.n + 1, sizeof *names);
    int *noselect = mb_calloc(r.n + 1, sizeof *noselect);
    size_t m = 0;
    for (size_t i = 0; i < r.n; i++) {
        const char *l = r.v[i].line;
        if (strncasecmp(l, "* LIST ", 7) != 0) continue;
        /* the upstream parser: split on '"', the 4th piece, or the 3rd */
        char *name = NULL;
        if (r.v[i].lit) name = mb_strdup(r.v[i].lit);
        else {
            const char *q[5] = {0};
            int k = 0;
            for (const char *p = l; *p && k < 5; p++)
                if (*p == '"') q[k++] = p;
            if (k >= 4) name = mb_strndup(q[2] + 1, (size_t)(q[3] - q[2] - 1));
            else {
                const char *sp = strrchr(l, ' ');
                name = mb_strdup(sp ? sp + 1 : l);
            }
        }
        if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
            free(name);
            continue;
        }
        noselect[m] = strstr(l, "\\Noselect") != NULL;
        names[m++] = name;
    }
    pe_result_free(&r);
    folder_info *f = mb_calloc(m + 1, sizeof *f);
    for (size_t i = 0; i < m; i++) {
        f[i].name = names[i];
        f[i].selectable = !noselect[i] &&
                          select_folder(s, names[i], &f[i].total, &f[i].unread) == 0;
    }
    free(names);
    free(noselect);
    *out = f;
    *n = m;
    return 0;
}

static void folders_free(folder_info *f, size_t n)
{
    for (size_t i = 0; i < n; i++) free(f[i].name);
    free(f);
}

static int t_get_folders(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)j;
    sess s = {0};
    folder_info *f = NULL;
    size_t n = 0;
    if (sess_open(&s, call) || list_folders(&s, &f, &n)) {
        mb_buf_printf(&s.o, "Error getting folders: Error listing folders: %s", s.why);
    } else if (!n) {
        mb_buf_puts(&s.o, "No folders found");
    } else {
        mb_buf_puts(&s.o, "Available folders:\n");
        for (size_t i = 0; i < n; i++) {
            mb_buf_printf(&s.o, "%zu. %s", i + 1, f[i].name);
            if (f[i].selectable) mb_buf_printf(&s.o, " (%ld total, %ld unread)", f[i].total, f[i].unread);
            else mb_buf_puts(&s.o, " (cannot select)");
            mb_buf_putc(&s.o, '\n');
        }
    }
    folders_free(f, n);
    return sess_reply(&s, res);
}

static int folder_op(mb_mcp_call *call, json_t *j, mb_mcp_result *res, int create)
{
    pe_args v = {.tool = create ? "create_folder" : "delete_folder", .a = j};
    const char *name = a_str(&v, "folder_name", 1, "");
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    int rc = -1;
    if (!sess_open(&s, call)) {
        char *mb = pe_imap_mailbox_arg(name);
        rc = simple(&s, create ? "CREATE" : "DELETE", mb);
        free(mb);
    }
    if (rc < 0)
        mb_buf_printf(&s.o, "Error %s folder: %s", create ? "creating" : "deleting", s.why);
    else if (rc > 0)
        mb_buf_printf(&s.o, "Failed to %s folder '%s'", create ? "create" : "delete", name);
    else mb_buf_printf(&s.o, "Folder '%s' %s successfully", name, create ? "created" : "deleted");
    return sess_reply(&s, res);
}

static int t_create_folder(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return folder_op(c, j, r, 1); }
static int t_delete_folder(mb_mcp_call *c, json_t *j, mb_mcp_result *r) { return folder_op(c, j, r, 0); }

static int t_mailbox_stats(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "get_mailbox_stats", .a = j};
    const char *name = a_str(&v, "folder_name", 0, NULL);
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error getting mailbox stats: %s", s.why);
    } else if (name && *name) {
        long t, u;
        if (select_folder(&s, name, &t, &u))
            mb_buf_printf(&s.o, "Error getting mailbox stats: %s", s.why);
        else mb_buf_printf(&s.o, "Folder Statistics for '%s':\nTotal messages: %ld\nUnread "
                           "messages: %ld\n", name, t, u);
    } else {
        folder_info *f = NULL;
        size_t n = 0;
        if (list_folders(&s, &f, &n)) {
            mb_buf_printf(&s.o, "Error getting mailbox stats: Error listing folders: %s", s.why);
        } else {
            long tt = 0, tu = 0;
            mb_buf_puts(&s.o, "Mailbox Statistics:\n");
            for (size_t i = 0; i < n; i++)
                if (f[i].selectable) {
                    mb_buf_printf(&s.o, "  %s: %ld total, %ld unread\n", f[i].name, f[i].total,
                                  f[i].unread);
                    tt += f[i].total;
                    tu += f[i].unread;
                }
            mb_buf_printf(&s.o, "\nOverall Total: %ld messages, %ld unread\n", tt, tu);
        }
        folders_free(f, n);
    }
    return sess_reply(&s, res);
}

static int t_unread_count(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "get_unread_count", .a = j};
    const char *name = a_str(&v, "folder_name", 0, NULL);
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error getting unread count: %s", s.why);
    } else if (name && *name) {
        long t, u;
        if (select_folder(&s, name, &t, &u)) mb_buf_printf(&s.o, "Error getting unread count: %s", s.why);
        else mb_buf_printf(&s.o, "Unread messages in '%s': %ld", name, u);
    } else {
        folder_info *f = NULL;
        size_t n = 0;
        long tu = 0;
        if (list_folders(&s, &f, &n) == 0)
            for (size_t i = 0; i < n; i++) tu += f[i].selectable ? f[i].unread : 0;
        folders_free(f, n);
        mb_buf_printf(&s.o, "Total unread messages: %ld", tu);
    }
    return sess_reply(&s, res);
}

static int t_check_connection(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    (void)j;
    sess s = {0};
    int imap_ok = sess_open(&s, call) == 0, smtp_ok = 0;
    if (s.a.email) {
        int fd = pe_endpoint_connect(&s.a.smtp);
        if (fd >= 0) {
            char buf[8] = "";
            smtp_ok = read(fd, buf, 3) == 3 && !memcmp(buf, "220", 3);
            close(fd);
        }
    }
    mb_buf_printf(&s.o, "Connection Status:\nIMAP: %s\nSMTP: %s\n",
                  imap_ok ? "\u2713 Connected" : "\u2717 Failed",
                  smtp_ok ? "\u2713 Connected" : "\u2717 Failed");
    if (imap_ok && smtp_ok) mb_buf_puts(&s.o, "\nAll connections are working properly");
    else if (imap_ok) mb_buf_puts(&s.o, "\nWarning: SMTP connection failed - cannot send emails");
    else if (smtp_ok) mb_buf_puts(&s.o, "\nWarning: IMAP connection failed - cannot receive emails");
    else mb_buf_puts(&s.o, "\nError: Both connections failed - check configuration");
    return sess_reply(&s, res);
}

static int t_email_headers(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "get_email_headers", .a = j};
    const char *id, *folder;
    if (a_id_folder(&v, res, &id, &folder)) return MB_OK;
    sess s = {0};
    mb_mail_msg m;
    if (sess_fetch(&s, call, id, folder, &m)) {
        mb_buf_printf(&s.o, "Error getting email headers: %s", s.why);
    } else {
        mb_buf_printf(&s.o, "Email Headers for ID: %s\n", id);
        mb_buf_puts(&s.o, "==================================================\n");
        for (size_t i = 0; i < m.n_headers; i++)
            mb_buf_printf(&s.o, "%s: %s\n", m.hnames[i], m.hvalues[i]);
        mb_mail_msg_free(&m);
    }
    return sess_reply(&s, res);
}

/* ------------------------------------------------------ import/export */

static int id_key(const char *id)
{
    long long v;
    if (!*id || strspn(id, "0123456789") != strlen(id) || !mb_py_int_str(id, &v)) return 0;
    return (int)(v > 2000000000 ? 2000000000 : v);
}

/* Python's truth of a JSON value. */
static int py_truthy(const json_t *v)
{
    if (!v) return 0;
    switch (json_typeof(v)) {
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0;
    case JSON_TRUE: return 1;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    default: return 0;
    }
}

/* What a `for x in v` over v yields first, as Python would iterate it:
 * NULL with *why for what is not iterable or gives no dict ("'str' object
 * has no attribute 'get'": a str's characters, a dict's keys); *n the number
 * of elements when v is a list (0 when empty either way). */
static char *py_iter_dicts(json_t *v, size_t *n)
{
    *n = 0;
    if (json_is_array(v)) {
        *n = json_array_size(v);
        return NULL;
    }
    if ((json_is_string(v) && json_string_length(v)) || (json_is_object(v) && json_object_size(v)))
        return mb_strdup("Import failed: 'str' object has no attribute 'get'");
    if (json_is_string(v) || json_is_object(v)) return NULL;
    return mb_asprintf("Import failed: '%s' object is not iterable", mb_py_type_name(v));
}

/* json_string as FileBackend.import_emails reads it (json.loads, then
 * _parse_email_data with Python's own errors along the way): NULL with *doc
 * set, or the text after "Error importing emails: ". */
static char *import_doc(const char *js, size_t len, json_t **doc)
{
    char *msg = NULL, *std = NULL;
    int nonstd = 0;
    int rc = pe_py_json_check(js, len, &msg, &nonstd);
    if (rc == -1) {
        char *w = mb_asprintf("Invalid JSON string: %s", msg);
        free(msg);
        return w;
    }
    if (rc == -2) return msg;
    json_error_t je;
    if (nonstd) js = std = pe_py_json_std(js, len, &len);
    json_t *d = json_loadb(js, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!d) d = json_loadb(js, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    free(std);
    if (!d) /* what Python takes and jansson does not (a lone surrogate) */
        return mb_asprintf("Import failed: %s", je.text);
    char *why = NULL;
    /* 'emails' not in import_data; then import_data['emails'] */
    if (json_is_object(d)) {
        if (!json_object_get(d, "emails")) why = mb_strdup("Invalid JSON format: missing 'emails' key");
    } else if (json_is_array(d) || json_is_string(d)) {
        int has = 0;
        size_t i;
        json_t *x;
        if (json_is_string(d)) has = memmem(json_string_value(d), json_string_length(d), "emails", 6) != NULL;
        else json_array_foreach(d, i, x) has |= json_is_string(x) && !strcmp(json_string_value(x), "emails");
        why = !has ? mb_strdup("Invalid JSON format: missing 'emails' key")
              : json_is_array(d) ? mb_strdup("Import failed: list indices must be integers or slices, not str")
              : mb_strdup("Import failed: string indices must be integers, not 'str'");
    } else {
        why = mb_asprintf("Import failed: argument of type '%s' is not iterable", mb_py_type_name(d));
    }
    json_t *emails = json_object_get(d, "emails");
    size_t n = 0;
    if (!why) why = py_iter_dicts(emails, &n);
    static const char *const req[] = {"email_id", "subject", "from_addr", "to_addr"};
    static const char *const areq[] = {"filename", "content_type", "size"};
    for (size_t i = 0; !why && i < n; i++) {
        json_t *e = json_array_get(emails, i), *atts;
        if (!json_is_object(e)) {
            why = mb_asprintf("Import failed: '%s' object has no attribute 'get'", mb_py_type_name(e));
            break;
        }
        size_t na = 0;
        atts = json_object_get(e, "attachments");
        if (atts && (why = py_iter_dicts(atts, &na))) break;
        for (size_t k = 0; !why && k < na; k++) {
            json_t *a = json_array_get(atts, k);
            if (!json_is_object(a)) {
                why = mb_asprintf("Import failed: '%s' object has no attribute 'get'",
                                  mb_py_type_name(a));
                break;
            }
            for (size_t f = 0; !why && f < 3; f++)
                if (!json_object_get(a, areq[f]))
                    why = mb_asprintf("Missing required field in JSON: '%s'", areq[f]);
        }
        for (size_t f = 0; !why && f < 4; f++)
            if (!json_object_get(e, req[f]))
                why = mb_asprintf("Missing required field in JSON: '%s'", req[f]);
        /* the message object built for attachments with content */
        for (size_t k = 0; !why && py_truthy(atts) && k < na; k++) {
            json_t *a = json_array_get(atts, k);
            if (!py_truthy(json_object_get(a, "content"))) continue;
            if (!json_is_string(json_object_get(a, "content_type")))
                why = mb_asprintf("Import failed: '%s' object has no attribute 'split'",
                                  mb_py_type_name(json_object_get(a, "content_type")));
            else if (!json_is_string(json_object_get(a, "filename")))
                why = mb_asprintf("Import failed: '%s' object has no attribute 'encode'",
                                  mb_py_type_name(json_object_get(a, "filename")));
        }
    }
    /* the sort by email_id.isdigit() */
    for (size_t i = 0; !why && i < n; i++) {
        json_t *id = json_object_get(json_array_get(emails, i), "email_id");
        if (!json_is_string(id))
            why = mb_asprintf("Import failed: '%s' object has no attribute 'isdigit'",
                              mb_py_type_name(id));
    }
    if (why) {
        json_decref(d);
        return why;
    }
    *doc = d;
    return NULL;
}

static const char *jget(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void hdr(mb_buf *m, const char *name, const char *v)
{
    mb_buf_printf(m, "%s: ", name);
    pe_header_word(m, v, 0);
    mb_buf_putc(m, '\n');
}

/* The message an imported email becomes: _reconstruct_email_message, or
 * with attachments the MIMEMultipart of file_backend._parse_email_data. */
static void import_message(json_t *e, mb_buf *m)
{
    const char *subject = jget(e, "subject"), *from = jget(e, "from_addr"),
               *to = jget(e, "to_addr"), *cc = jget(e, "cc_addr"), *bcc = jget(e, "bcc_addr"),
               *mid = jget(e, "message_id"), *date = jget(e, "date"),
               *text = jget(e, "body_text"), *html = jget(e, "body_html");
    json_t *atts = json_object_get(e, "attachments");
    unsigned char rnd[8];
    mb_random_bytes(rnd, sizeof rnd, NULL);
    unsigned long long r = 0;
    for (int i = 0; i < 8; i++) r = r << 8 | rnd[i];
    char bd[64];
    snprintf(bd, sizeof bd, "===============%019llu==", r % 10000000000000000000ULL);
    if (json_array_size(atts)) {
        mb_buf_printf(m, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n", bd);
        hdr(m, "Subject", subject ? subject : "");
        hdr(m, "From", from ? from : "");
        hdr(m, "To", to ? to : "");
        if (cc && *cc) hdr(m, "Cc", cc);
        if (mid && *mid) hdr(m, "Message-ID", mid);
        if (date && *date) hdr(m, "Date", date);
        mb_buf_putc(m, '\n');
        if (text && *text) {
            mb_buf_printf(m, "--%s\nContent-Type: text/plain; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                          "Content-Transfer-Encoding: base64\n\n", bd);
            pe_b64_lines(m, (const unsigned char *)text, strlen(text));
        }
        if (html && *html) {
            mb_buf_printf(m, "--%s\nContent-Type: text/html; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                          "Content-Transfer-Encoding: base64\n\n", bd);
            pe_b64_lines(m, (const unsigned char *)html, strlen(html));
        }
        size_t i;
        json_t *a;
        json_array_foreach(atts, i, a) {
            const char *content = jget(a, "content"), *ct = jget(a, "content_type"),
                       *fn = jget(a, "filename");
            if (!content || !*content) continue;
            const char *slash = ct ? strchr(ct, '/') : NULL;
            int two = slash && !strchr(slash + 1, '/');
            mb_buf_printf(m, "--%s\nContent-Type: %s\nMIME-Version: 1.0\nContent-Transfer-Encoding: "
                          "base64\nContent-Disposition: attachment; filename=\"%s\"\n\n%s\n", bd,
                          two ? ct : "application/octet-stream", fn ? fn : "", content);
        }
        mb_buf_printf(m, "--%s--\n", bd);
        return;
    }
    if (html && *html)
        mb_buf_printf(m, "Content-Type: multipart/alternative; boundary=\"%s\"\nMIME-Version: 1.0\n",
                      bd);
    else
        mb_buf_puts(m, "Content-Type: text/plain; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                       "Content-Transfer-Encoding: base64\n");
    hdr(m, "Subject", subject ? subject : "");
    hdr(m, "From", from ? from : "");
    hdr(m, "To", to ? to : "");
    if (cc && *cc) hdr(m, "Cc", cc);
    if (bcc && *bcc) hdr(m, "Bcc", bcc);
    if (mid && *mid) hdr(m, "Message-ID", mid);
    if (date && *date) {
        hdr(m, "Date", date);
    } else {
        char d[64];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(d, sizeof d, "%a, %d %b %Y %H:%M:%S %z", &tm);
        hdr(m, "Date", d);
    }
    mb_buf_putc(m, '\n');
    if (html && *html) {
        mb_buf_printf(m, "--%s\nContent-Type: text/plain; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                      "Content-Transfer-Encoding: base64\n\n", bd);
        pe_b64_lines(m, (const unsigned char *)(text ? text : ""), text ? strlen(text) : 0);
        mb_buf_printf(m, "--%s\nContent-Type: text/html; charset=\"utf-8\"\nMIME-Version: 1.0\n"
                      "Content-Transfer-Encoding: base64\n\n", bd);
        pe_b64_lines(m, (const unsigned char *)html, strlen(html));
        mb_buf_printf(m, "--%s--\n", bd);
    } else {
        pe_b64_lines(m, (const unsigned char *)(text ? text : ""), text ? strlen(text) : 0);
    }
}

static int t_import_emails(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_args v = {.tool = "import_emails", .a = j};
    const char *js = a_str(&v, "json_string", 1, "");
    const char *target = a_str(&v, "target_folder", 0, NULL);
    int preserve = 1;
    json_t *px = json_is_object(j) ? json_object_get(j, "preserve_folders") : NULL;
    if (px && !mb_py_lax_bool(px, 1, &preserve))
        verr(&v, "preserve_folders", json_is_string(px) ? "Input should be a valid boolean, "
             "unable to interpret input" : "Input should be a valid boolean",
             json_is_string(px) ? "bool_parsing" : "bool_type", px);
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    json_t *doc = NULL;
    char *why = import_doc(js, json_string_length(json_object_get(j, "json_string")), &doc);
    if (why) {
        mb_buf_printf(&s.o, "Error importing emails: %s", why);
        free(why);
        return replyf_buf(res, &s.o);
    }
    json_t *emails = json_object_get(doc, "emails");
    size_t n = json_array_size(emails), i;
    json_t *e;
    if (!n) {
        json_decref(doc);
        return reply(res, "No emails found in the provided JSON data");
    }
    /* stable ascending sort by numeric id (others count 0) */
    json_t **v2 = mb_calloc(n, sizeof *v2);
    for (i = 0; i < n; i++) v2[i] = json_array_get(emails, i);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            const char *x = jget(v2[b - 1], "email_id"), *y = jget(v2[b], "email_id");
            if (id_key(y ? y : "") < id_key(x ? x : "")) {
                json_t *t = v2[b];
                v2[b] = v2[b - 1];
                v2[b - 1] = t;
            } else break;
        }
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error importing emails: %s", s.why);
        sess_close(&s);
        free(v2);
        json_decref(doc);
        return replyf_buf(res, &s.o);
    }
    long ok = 0, nf = 0;
    mb_buf reasons = {0};
    char **fnames = mb_calloc(n + 1, sizeof *fnames);
    long *fcounts = mb_calloc(n + 1, sizeof *fcounts);
    size_t nfold = 0;
    for (i = 0; i < n; i++) {
        e = v2[i];
        json_t *idj = json_object_get(e, "email_id");
        char *id = json_is_string(idj) ? mb_strdup(json_string_value(idj)) : json_dumps(idj, JSON_ENCODE_ANY);
        const char *ef = jget(e, "folder");
        char *folder = mb_strdup(preserve && ef && *ef ? ef : target && *target ? target : "INBOX");
        long t, u;
        int usable = select_folder(&s, folder, &t, &u) == 0;
        if (!usable) {
            if (preserve && ef && *ef && strcmp(ef, "INBOX") && strcmp(ef, "SENT") &&
                strcmp(ef, "DRAFTS") && strcmp(ef, "TRASH")) {
                char *mb = pe_imap_mailbox_arg(folder);
                int c = simple(&s, "CREATE", mb);
                free(mb);
                if (c != 0 || select_folder(&s, folder, &t, &u) != 0) {
                    free(folder);
                    folder = mb_strdup("INBOX");
                    select_folder(&s, folder, &t, &u);
                }
            } else {
                nf++;
                if (nf <= 5)
                    mb_buf_printf(&reasons, "\n  - Email %s: Cannot access folder '%s': %s", id,
                                  folder, s.why);
                free(folder);
                free(id);
                continue;
            }
        }
        mb_buf msg = {0};
        import_message(e, &msg);
        char *mb = pe_imap_mailbox_arg(folder);
        mb_buf ap = {0};
        int seen = json_is_true(json_object_get(e, "is_read"));
        mb_buf_printf(&ap, "%s %s{%zu+}\r\n", mb, seen ? "(\\Seen) " : "", msg.len);
        mb_buf_append(&ap, msg.data, msg.len);
        free(mb);
        pe_result r;
        char *w = NULL;
        int appended = pe_imap_cmd(s.c, "APPEND", ap.data, ap.len, &r, &w) == 0;
        if (appended) {
            appended = !strcmp(r.typ, "OK");
            pe_result_free(&r);
        }
        free(w);
        mb_buf_free(&ap);
        mb_buf_free(&msg);
        if (appended) {
            ok++;
            size_t k = 0;
            while (k < nfold && strcmp(fnames[k], folder)) k++;
            if (k == nfold) fnames[nfold++] = mb_strdup(folder);
            fcounts[k]++;
        } else {
            nf++;
            if (nf <= 5) mb_buf_printf(&reasons, "\n  - Email %s: APPEND to '%s' failed", id, folder);
        }
        free(folder);
        free(id);
    }
    mb_buf_printf(&s.o, "Successfully imported %ld/%zu emails", ok, n);
    if (preserve && nfold > 1) {
        mb_buf_puts(&s.o, "\n\nImport breakdown by folder:");
        for (size_t k = 0; k < nfold; k++)
            mb_buf_printf(&s.o, "\n  - %s: %ld emails", fnames[k], fcounts[k]);
    } else if (nfold) {
        mb_buf_printf(&s.o, " to %s", fnames[0]);
    }
    if (nf) {
        mb_buf_printf(&s.o, "\n\n%ld emails failed to import:", nf);
        if (reasons.len) mb_buf_append(&s.o, reasons.data, reasons.len);
        if (nf > 5) mb_buf_printf(&s.o, "\n  ... and %ld more", nf - 5);
    }
    mb_buf_free(&reasons);
    for (size_t k = 0; k < nfold; k++) free(fnames[k]);
    free(fnames);
    free(fcounts);
    free(v2);
    json_decref(doc);
    return sess_reply(&s, res);
}

static int t_download_attachment(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_srv *sv = mb_mcp_call_data(call);
    pe_args v = {.tool = "download_attachment", .a = j};
    const char *id = a_str(&v, "email_id", 1, "");
    const char *fn = a_str(&v, "attachment_filename", 1, "");
    if (a_done(&v, res)) return MB_OK;
    sess s = {0};
    mb_mail_msg m;
    if (sess_fetch(&s, call, id, "INBOX", &m)) {
        mb_buf_printf(&s.o, "Error downloading attachment: %s", s.why);
        return sess_reply(&s, res);
    }
    const mb_mail_att *att = NULL;
    for (size_t i = 0; i < m.n_atts && !att; i++)
        if (!strcmp(m.atts[i].filename, fn)) att = &m.atts[i];
    if (!att) {
        mb_buf_printf(&s.o, "Attachment '%s' not found in email %s", fn, id);
    } else if (!att->size) {
        mb_buf_printf(&s.o, "Could not extract attachment data for '%s'", fn);
    } else {
        /* the file name comes from the mail: never a path */
        const char *base = strrchr(fn, '/');
        base = base ? base + 1 : fn;
        const char *dir = sv->download_path ? sv->download_path : ".";
        mb_err err = {0};
        char *path = NULL;
        if (mb_mkdir_p(dir, 0755, &err) == MB_OK) {
            path = mb_asprintf("%s/%s", dir, base);
            const char *dot = strrchr(base, '.');
            size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
            for (int k = 1; access(path, F_OK) == 0; k++) {
                free(path);
                path = mb_asprintf("%s/%.*s(%d)%s", dir, (int)stem, base, k, base + stem);
            }
            if (mb_write_file_atomic(path, att->data, att->size, 0644, &err) != MB_OK) {
                free(path);
                path = NULL;
            }
        }
        if (path) mb_buf_printf(&s.o, "Attachment '%s' saved to: %s", fn, path);
        else mb_buf_printf(&s.o, "Error downloading attachment: Failed to save attachment: %s", err.msg);
        free(path);
    }
    mb_mail_msg_free(&m);
    return sess_reply(&s, res);
}

static void export_one(json_t *arr, const char *id, const char *folder, const mb_mail_msg *m, int seen,
                       int flagged)
{
    json_t *e = json_object();
    json_object_set_new(e, "email_id", json_string(id));
    json_object_set_new(e, "subject", json_string(m->subject));
    json_object_set_new(e, "from_addr", json_string(m->from_addr));
    json_object_set_new(e, "to_addr", json_string(m->to_addr));
    json_object_set_new(e, "cc_addr", m->cc_addr ? json_string(m->cc_addr) : json_null());
    json_object_set_new(e, "bcc_addr", json_null());
    json_object_set_new(e, "date", json_string(m->date));
    json_object_set_new(e, "message_id", json_string(m->message_id));
    json_object_set_new(e, "body_text", json_string(m->body_text));
    json_object_set_new(e, "body_html", json_string(m->body_html));
    json_object_set_new(e, "is_read", json_boolean(seen));
    json_object_set_new(e, "is_important", json_boolean(flagged));
    json_object_set_new(e, "folder", json_string(folder));
    json_t *atts = json_array();
    for (size_t i = 0; i < m->n_atts; i++) {
        json_t *a = json_object();
        json_object_set_new(a, "filename", json_string(m->atts[i].filename));
        json_object_set_new(a, "content_type", json_string(m->atts[i].content_type));
        json_object_set_new(a, "size", json_integer((json_int_t)m->atts[i].size));
        mb_buf b = {0};
        pe_b64_lines(&b, (const unsigned char *)m->atts[i].data, m->atts[i].size);
        mb_buf_putc(&b, 0);
        size_t w = 0;
        for (size_t k = 0; b.data[k]; k++)
            if (b.data[k] != '\n') b.data[w++] = b.data[k];
        b.data[w] = 0;
        json_object_set_new(a, "content", m->atts[i].size ? json_string(b.data) : json_null());
        mb_buf_free(&b);
        json_array_append_new(atts, a);
    }
    json_object_set_new(e, "attachments", atts);
    json_array_append_new(arr, e);
}

static int t_export_emails(mb_mcp_call *call, json_t *j, mb_mcp_result *res)
{
    pe_srv *sv = mb_mcp_call_data(call);
    pe_args v = {.tool = "export_emails", .a = j};
    const char *folder = a_str(&v, "folder", 0, NULL);
    a_str(&v, "export_path", 0, "emails_export.json");
    json_t *mx = json_is_object(j) ? json_object_get(j, "max_emails") : NULL;
    long long max = mx && !json_is_null(mx) ? a_int(&v, "max_emails", 0) : 0;
    int all = 0;
    json_t *ax = json_is_object(j) ? json_object_get(j, "export_all_folders") : NULL;
    if (ax && !mb_py_lax_bool(ax, 1, &all))
        verr(&v, "export_all_folders", "Input should be a valid boolean", "bool_type", ax);
    if (a_done(&v, res)) return MB_OK;
    if (all && folder && *folder)
        return reply(res, "Error: Cannot specify both 'folder' and 'export_all_folders=True'");
    sess s = {0};
    if (sess_open(&s, call)) {
        mb_buf_printf(&s.o, "Error exporting emails: %s", s.why);
        return sess_reply(&s, res);
    }
    folder_info *f = NULL;
    size_t nf = 0;
    const char **names = NULL;
    size_t nn = 0;
    if (all) {
        list_folders(&s, &f, &nf);
        for (size_t i = 0; i < nf; i++)
            if (f[i].selectable) mb_strv_push(&names, &nn, mb_strdup(f[i].name));
    } else {
        mb_strv_push(&names, &nn, mb_strdup(folder && *folder ? folder : "INBOX"));
    }
    json_t *arr = json_array();
    long *counts = mb_calloc(nn + 1, sizeof *counts);
    for (size_t k = 0; k < nn; k++) {
        long t, u;
        if (select_folder(&s, names[k], &t, &u) || !t) continue;
        int failed;
        char **ids = search_ids(&s, "ALL", 3, &failed);
        for (size_t i = 0; ids && ids[i]; i++) {
            if (max && (long long)json_array_size(arr) >= max) break;
            mb_mail_msg m;
            int seen, fl;
            if (fetch_email(&s, ids[i], names[k], &m, &seen, &fl)) continue;
            export_one(arr, ids[i], names[k], &m, seen, fl);
            counts[k]++;
            mb_mail_msg_free(&m);
        }
        mb_strv_free(ids);
        if (max && (long long)json_array_size(arr) >= max) break;
    }
    if (!json_array_size(arr)) {
        mb_buf_printf(&s.o, "No emails found to export from %s", all ? "all folders" : names[0]);
    } else {
        char ts[32], iso[40];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", &tm);
        mb_iso8601(mb_now(), iso);
        const char *dir = sv->export_path ? sv->export_path : ".";
        char *path = all ? mb_asprintf("%s/all_folders_export_%s.json", dir, ts)
                         : mb_asprintf("%s/%s_export_%s.json", dir, names[0], ts);
        json_t *doc = json_object();
        json_object_set_new(doc, "export_date", json_string(iso));
        json_object_set_new(doc, "total_emails", json_integer((json_int_t)json_array_size(arr)));
        json_object_set(doc, "emails", arr);
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        mb_err err = {0};
        if (mb_mkdir_p(dir, 0755, &err) || !text ||
            mb_write_file_atomic(path, text, strlen(text), 0644, &err)) {
            mb_buf_printf(&s.o, "Error exporting emails: Export failed: %s", err.msg);
        } else {
            mb_buf_printf(&s.o, "Successfully exported %zu emails to %s", json_array_size(arr), path);
            if (all) {
                mb_buf_puts(&s.o, "\nExport breakdown by folder:");
                for (size_t k = 0; k < nn; k++)
                    mb_buf_printf(&s.o, "\n  - %s: %ld emails", names[k], counts[k]);
            }
        }
        free(text);
        free(path);
        json_decref(doc);
    }
    json_decref(arr);
    free(counts);
    mb_strv_free((char **)names);
    folders_free(f, nf);
    return sess_reply(&s, res);
}

/* ------------------------------------------------------------- table */

#define S(n, t) "\"" n "\": {\"title\": \"" t "\", \"type\": \"string\"}"
#define SD(n, d, t) "\"" n "\": {\"default\": \"" d "\", \"title\": \"" t "\", \"type\": \"string\"}"
#define SN(n, t) "\"" n "\": {\"default\": null, \"title\": \"" t "\", \"type\": \"string\"}"
#define ID(n, d, t) "\"" n "\": {\"default\": " d ", \"title\": \"" t "\", \"type\": \"integer\"}"
#define LS(n, t) "\"" n "\": {\"items\": {\"type\": \"string\"}, \"title\": \"" t "\", \"type\": \"array\"}"
#define LSN(n, t) "\"" n "\": {\"default\": null, \"items\": {\"type\": \"string\"}, \"title\": \"" t "\", \"type\": \"array\"}"
#define BD(n, d, t) "\"" n "\": {\"default\": " d ", \"title\": \"" t "\", \"type\": \"boolean\"}"
#define SCHEMA(tool, props, req) \
    "{\"properties\": {" props "}, " req "\"title\": \"" tool "Arguments\", \"type\": \"object\"}"
#define REQ(...) "\"required\": [" __VA_ARGS__ "], "
#define OUT(tool)                                                                               \
    "{\"properties\": {\"result\": {\"title\": \"Result\", \"type\": \"string\"}}, \"required\": " \
    "[\"result\"], \"title\": \"" tool "Output\", \"type\": \"object\"}"
#define TOOL(nm, desc, props, req, f) \
    {.name = nm, .description = desc, .input_schema = SCHEMA(nm, props, req), \
     .output_schema = OUT(nm), .fn = f}

static const mb_mcp_tool TOOLS[] = {
    TOOL("get_emails",
         "Get paginated list of emails from specified folder\n        \n        Args:\n"
         "            folder: Email folder name (default: INBOX)\n            page: Page number "
         "starting from 1 (default: 1)\n            page_size: Number of emails per page "
         "(default: 20)\n        ",
         SD("folder", "INBOX", "Folder") ", " ID("page", "1", "Page") ", "
             ID("page_size", "20", "Page Size"), "", t_get_emails),
    TOOL("read_email",
         "Read full content of a specific email\n        \n        Args:\n            email_id: "
         "Email ID to read\n            folder: Email folder the email is in (default: INBOX)\n"
         "        ",
         S("email_id", "Email Id") ", " SD("folder", "INBOX", "Folder"), REQ("\"email_id\""),
         t_read_email),
    TOOL("search_emails",
         "Search emails with query string (sorted by date descending)\n        \n        Args:\n"
         "            query: Search query (subject, from, body content)\n            folder: "
         "Folder to search in (default: INBOX)\n            page: Page number starting from 1 "
         "(default: 1)\n            page_size: Number of results per page (default: 20)\n        ",
         S("query", "Query") ", " SD("folder", "INBOX", "Folder") ", " ID("page", "1", "Page") ", "
             ID("page_size", "20", "Page Size"), REQ("\"query\""), t_search_emails),
    TOOL("send_email",
         "Send an email with optional HTML body, CC, BCC, and attachments\n        \n        "
         "Args:\n            to: Recipient email address(es), comma-separated\n            "
         "subject: Email subject\n            body: Plain text body\n            html_body: HTML "
         "body content (optional)\n            cc: CC recipients, comma-separated (optional)\n"
         "            bcc: BCC recipients, comma-separated (optional)\n            attachments: "
         "List of file paths to attach (optional)\n        ",
         S("to", "To") ", " S("subject", "Subject") ", " S("body", "Body") ", "
             SN("html_body", "Html Body") ", " SN("cc", "Cc") ", " SN("bcc", "Bcc") ", "
             LSN("attachments", "Attachments"), REQ("\"to\", \"subject\", \"body\""), t_send_email),
    TOOL("reply_email",
         "Reply to an email\n        \n        Args:\n            email_id: ID of email to reply "
         "to\n            body: Reply message body (plain text)\n            html_body: Reply "
         "message body (HTML, optional)\n            cc: Additional CC recipients (optional)\n"
         "            bcc: BCC recipients (optional)\n            reply_all: Whether to reply to "
         "all recipients (default: False)\n            folder: Email folder the email is in "
         "(default: INBOX)\n        ",
         S("email_id", "Email Id") ", " S("body", "Body") ", " SN("html_body", "Html Body") ", "
             SN("cc", "Cc") ", " SN("bcc", "Bcc") ", " BD("reply_all", "false", "Reply All") ", "
             SD("folder", "INBOX", "Folder"), REQ("\"email_id\", \"body\""), t_reply_email),
    TOOL("forward_email",
         "Forward an email to other recipients\n        \n        Args:\n            email_id: ID "
         "of email to forward\n            to: Recipients to forward to\n            body: "
         "Additional message body (optional)\n            html_body: Additional HTML message body "
         "(optional)\n            cc: CC recipients (optional)\n            bcc: BCC recipients "
         "(optional)\n            folder: Email folder the email is in (default: INBOX)\n        ",
         S("email_id", "Email Id") ", " S("to", "To") ", " SN("body", "Body") ", "
             SN("html_body", "Html Body") ", " SN("cc", "Cc") ", " SN("bcc", "Bcc") ", "
             SD("folder", "INBOX", "Folder"), REQ("\"email_id\", \"to\""), t_forward_email),
    TOOL("delete_email",
         "Delete an email\n        \n        Args:\n            email_id: Email ID to delete\n"
         "            folder: Email folder the email is in (default: INBOX)\n        ",
         S("email_id", "Email Id") ", " SD("folder", "INBOX", "Folder"), REQ("\"email_id\""),
         t_delete_email),
    TOOL("move_email",
         "Move email to another folder\n        \n        Args:\n            email_id: Email ID "
         "to move\n            target_folder: Target folder name\n            source_folder: "
         "Source folder the email is in (default: INBOX)\n        ",
         S("email_id", "Email Id") ", " S("target_folder", "Target Folder") ", "
             SD("source_folder", "INBOX", "Source Folder"), REQ("\"email_id\", \"target_folder\""),
         t_move_email),
    TOOL("mark_emails",
         "Mark multiple emails with status (read/unread/important/not_important)\n        \n"
         "        Args:\n            email_ids: List of email IDs to mark\n            status: "
         "Status to set (read, unread, important, not_important)\n            folder: Email "
         "folder the emails are in (default: INBOX)\n        ",
         LS("email_ids", "Email Ids") ", " S("status", "Status") ", " SD("folder", "INBOX", "Folder"),
         REQ("\"email_ids\", \"status\""), t_mark_emails),
    TOOL("move_emails",
         "Move multiple emails to another folder with improved ID synchronization\n        \n"
         "        Args:\n            email_ids: List of email IDs to move\n            "
         "target_folder: Target folder name\n            source_folder: Source folder the emails "
         "are in (default: INBOX)\n        ",
         LS("email_ids", "Email Ids") ", " S("target_folder", "Target Folder") ", "
             SD("source_folder", "INBOX", "Source Folder"),
         REQ("\"email_ids\", \"target_folder\""), t_move_emails),
    TOOL("delete_emails",
         "Delete multiple emails with improved ID synchronization\n        \n        Args:\n"
         "            email_ids: List of email IDs to delete\n            folder: Email folder the "
         "emails are in (default: INBOX)\n        ",
         LS("email_ids", "Email Ids") ", " SD("folder", "INBOX", "Folder"), REQ("\"email_ids\""),
         t_delete_emails),
    TOOL("get_folders", "Get list of available email folders", "", "", t_get_folders),
    TOOL("create_folder",
         "Create new email folder\n        \n        Args:\n            folder_name: Name of "
         "folder to create\n        ",
         S("folder_name", "Folder Name"), REQ("\"folder_name\""), t_create_folder),
    TOOL("delete_folder",
         "Delete email folder\n        \n        Args:\n            folder_name: Name of folder "
         "to delete\n        ",
         S("folder_name", "Folder Name"), REQ("\"folder_name\""), t_delete_folder),
    TOOL("get_mailbox_stats",
         "Get mailbox statistics\n        \n        Args:\n            folder_name: Specific "
         "folder name (optional, defaults to all folders)\n        ",
         SN("folder_name", "Folder Name"), "", t_mailbox_stats),
    TOOL("get_unread_count",
         "Get unread message count\n        \n        Args:\n            folder_name: Specific "
         "folder name (optional, defaults to all folders)\n        ",
         SN("folder_name", "Folder Name"), "", t_unread_count),
    TOOL("check_connection", "Check email server connection status", "", "", t_check_connection),
    TOOL("get_email_headers",
         "Get complete email headers for technical analysis\n        \n        Args:\n"
         "            email_id: Email ID to get headers for\n            folder: Email folder the "
         "email is in (default: INBOX)\n        ",
         S("email_id", "Email Id") ", " SD("folder", "INBOX", "Folder"), REQ("\"email_id\""),
         t_email_headers),
    TOOL("save_draft",
         "Save email draft\n        \n        Args:\n            subject: Email subject\n"
         "            body: Plain text body\n            html_body: HTML body content (optional)\n"
         "            to: Recipient email address(es) (optional)\n            cc: CC recipients "
         "(optional)\n            bcc: BCC recipients (optional)\n        ",
         S("subject", "Subject") ", " S("body", "Body") ", " SN("html_body", "Html Body") ", "
             SN("to", "To") ", " SN("cc", "Cc") ", " SN("bcc", "Bcc"),
         REQ("\"subject\", \"body\""), t_save_draft),
    TOOL("get_drafts",
         "Get list of saved drafts\n        \n        Args:\n            page: Page number "
         "starting from 1 (default: 1)\n            page_size: Number of drafts per page "
         "(default: 20)\n        ",
         ID("page", "1", "Page") ", " ID("page_size", "20", "Page Size"), "", t_get_drafts),
    TOOL("update_draft",
         "Update existing draft\n        \n        Args:\n            draft_id: Draft ID to "
         "update\n            subject: Email subject (optional)\n            body: Plain text body "
         "(optional)\n            html_body: HTML body content (optional)\n            to: "
         "Recipient email address(es) (optional)\n            cc: CC recipients (optional)\n"
         "            bcc: BCC recipients (optional)\n        ",
         S("draft_id", "Draft Id") ", " SN("subject", "Subject") ", " SN("body", "Body") ", "
             SN("html_body", "Html Body") ", " SN("to", "To") ", " SN("cc", "Cc") ", "
             SN("bcc", "Bcc"), REQ("\"draft_id\""), t_update_draft),
    TOOL("delete_draft",
         "Delete draft\n        \n        Args:\n            draft_id: Draft ID to delete\n"
         "        ",
         S("draft_id", "Draft Id"), REQ("\"draft_id\""), t_delete_draft),
    TOOL("export_emails",
         "Export emails to file for backup\n        \n        Args:\n            folder: Specific "
         "folder to export (mutually exclusive with export_all_folders)\n            export_path: "
         "Path where to save the export file  \n            max_emails: Maximum number of emails "
         "to export (optional, exports all if not specified)\n            export_all_folders: "
         "Export from all folders instead of just one (default: False)\n        ",
         SN("folder", "Folder") ", " SD("export_path", "emails_export.json", "Export Path") ", "
             "\"max_emails\": {\"default\": null, \"title\": \"Max Emails\", \"type\": "
             "\"integer\"}, " BD("export_all_folders", "false", "Export All Folders"),
         "", t_export_emails),
    TOOL("import_emails",
         "Import emails from a JSON string to IMAP server\n        \n        Args:\n            "
         "json_string: JSON string containing email data with 'emails' key\n            "
         "target_folder: Target folder for imported emails (if preserve_folders=False)\n"
         "            preserve_folders: Whether to preserve original folder structure (default: "
         "True)\n        ",
         S("json_string", "Json String") ", " SN("target_folder", "Target Folder") ", "
             BD("preserve_folders", "true", "Preserve Folders"), REQ("\"json_string\""),
         t_import_emails),
    TOOL("download_attachment",
         "Download email attachment to configured download path\n        \n        Args:\n"
         "            email_id: Email ID containing the attachment\n            "
         "attachment_filename: Name of attachment to download\n        ",
         S("email_id", "Email Id") ", " S("attachment_filename", "Attachment Filename"),
         REQ("\"email_id\", \"attachment_filename\""), t_download_attachment),
    {0},
};

static const mb_mcp_info INFO = {
    .name = "emails-mcp",
    .version = "1.23.2", /* FastMCP reports the mcp package's version */
    .flavor = MB_MCP_PY_FASTMCP,
    .before_call = before_call,
};

static void srv_free(void *p)
{
    pe_srv *s = p;
    if (!s) return;
    free(s->upload_path);
    free(s->download_path);
    free(s->export_path);
    free(s);
}

int mb_srv_poste_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    pe_srv *s = mb_calloc(1, sizeof *s);
    static const struct option lo[] = {
        {"attachment_upload_path", required_argument, NULL, 'u'},
        {"attachment_download_path", required_argument, NULL, 'd'},
        {"email_export_path", required_argument, NULL, 'e'},
        {"port", required_argument, NULL, 'p'},
        {"debug", no_argument, NULL, 'g'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        char **dst = c == 'u' ? &s->upload_path : c == 'd' ? &s->download_path
                   : c == 'e' ? &s->export_path : NULL;
        if (c == '?') {
            srv_free(s);
            return mb_err_set(err, MB_EINVAL, "usage: mcpbox mcp poste_email_toolathlon "
                              "[--attachment_upload_path DIR] [--attachment_download_path DIR] "
                              "[--email_export_path DIR]");
        }
        if (dst) {
            free(*dst);
            *dst = mb_strdup(optarg);
        }
    }
    /* Inside a sandbox: the agent's programs reach mail on the usual ports. */
    if (access(MB_MAIL_DIR_INSIDE "/imap.sock", F_OK) == 0) {
        mb_err e2;
        if (mb_mail_forward_start(MB_MAIL_DIR_INSIDE "/imap.sock", 1143, &e2))
            mb_debug("poste: %s", e2.msg);
        if (mb_mail_forward_start(MB_MAIL_DIR_INSIDE "/smtp.sock", 1587, &e2))
            mb_debug("poste: %s", e2.msg);
    }
    return mb_mcp_server_new_with_tools(&INFO, TOOLS, s, srv_free, out, err);
}
