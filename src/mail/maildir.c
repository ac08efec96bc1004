/*
 * maildir.c - a domain's mail as Klavis's PosteEmailData: initialize
 * replaces each listed user's mail by writing Maildir++ files directly
 * (Dovecot picks them up at its next sync; the user's sessions are ended
 * first), dump reads every user's folders back (flags from the file names,
 * headers and bodies through mime.c), reset returns to the last initialize.
 *
 *   PosteEmailData {users: {"<email>": {emails: [{subject*, from_addr*,
 *   to_addr*, email_id, cc_addr, bcc_addr, date, message_id, body_text,
 *   body_html, is_read=false, is_important=false, folder="INBOX",
 *   attachments: [{filename*, content_type, size}]}]}}}
 *
 * Attachments carry no content in that schema: a part of `size` zero bytes
 * is written, so that a dump reports what was given.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ATTACHMENT (25u << 20)
#define MAX_EMAILS 100000

static const char *const DEFAULT_FOLDERS[] = {"Sent", "Drafts", "Junk", "Trash"};

static void detail(json_t *d, json_t *loc, const char *msg, const char *type)
{
    json_array_append_new(d, json_pack("{s:s,s:o,s:s}", "type", type, "loc", loc, "msg", msg));
}

/* A folder name mcpbox writes: printable ASCII without '/', not starting
 * with '.', no "..". */
static int folder_ok(const char *f)
{
    if (!*f || *f == '.' || strstr(f, "..") || strlen(f) > 200) return 0;
    for (const char *p = f; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '/' || *p == '&')
            return 0;
    return 1;
}

static char *user_home(mb_mail *m, const char *domain, const char *local)
{
    return mb_asprintf("%s/domains/%s/users/%s", m->root, domain, local);
}

/* The Maildir directory of a folder. */
static char *folder_dir(const char *maildir, const char *folder)
{
    if (!strcasecmp(folder, "INBOX")) return mb_strdup(maildir);
    return mb_asprintf("%s/.%s", maildir, folder);
}

static int mkfolder(mb_mail *m, const char *maildir, const char *folder, mb_err *err)
{
    char *d = folder_dir(maildir, folder);
    static const char *const sub[] = {"", "/cur", "/new", "/tmp"};
    int rc = MB_OK;
    for (size_t i = 0; i < 4 && !rc; i++) {
        char *p = mb_asprintf("%s%s", d, sub[i]);
        if (mkdir(p, 0700) != 0 && errno != EEXIST) rc = mb_err_sys(err, errno, "mkdir %s", p);
        else if (chown(p, m->mail_uid, m->mail_gid) != 0) rc = mb_err_sys(err, errno, "chown %s", p);
        free(p);
    }
    if (!rc && strcasecmp(folder, "INBOX")) {
        char *mf = mb_asprintf("%s/maildirfolder", d);
        if (mb_mail__write_file(mf, "", 0, 0600, err) == MB_OK && chown(mf, m->mail_uid, m->mail_gid)) {
        }
        free(mf);
    }
    free(d);
    return rc;
}

static void hdr_word(mb_buf *b, const char *name, const char *v)
{
    int ascii = 1;
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p >= 0x80 || *p == '\r' || *p == '\n') ascii = 0;
    mb_buf_printf(b, "%s: ", name);
    if (ascii) {
        mb_buf_puts(b, v);
    } else {
        static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        mb_buf_puts(b, "=?utf-8?b?");
        size_t n = strlen(v);
        const unsigned char *s = (const unsigned char *)v;
        for (size_t i = 0; i < n; i += 3) {
            unsigned x = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                         (i + 2 < n ? s[i + 2] : 0);
            char q[4] = {t[x >> 18 & 63], t[x >> 12 & 63], i + 1 < n ? t[x >> 6 & 63] : '=',
                         i + 2 < n ? t[x & 63] : '='};
            mb_buf_append(b, q, 4);
        }
        mb_buf_puts(b, "?=");
    }
    mb_buf_puts(b, "\r\n");
}

static void body_lines(mb_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n' && (b->len == 0 || b->data[b->len - 1] != '\r')) mb_buf_putc(b, '\r');
        mb_buf_putc(b, *s);
    }
    mb_buf_puts(b, "\r\n");
}

static const char *js(json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : NULL;
}

static void build(json_t *e, const char *domain, mb_buf *b)
{
    const char *text = js(e, "body_text"), *html = js(e, "body_html");
    json_t *atts = json_object_get(e, "attachments");
    hdr_word(b, "From", js(e, "from_addr"));
    hdr_word(b, "To", js(e, "to_addr"));
    if (js(e, "cc_addr") && *js(e, "cc_addr")) hdr_word(b, "Cc", js(e, "cc_addr"));
    if (js(e, "bcc_addr") && *js(e, "bcc_addr")) hdr_word(b, "Bcc", js(e, "bcc_addr"));
    hdr_word(b, "Subject", js(e, "subject"));
    if (js(e, "date") && *js(e, "date")) {
        hdr_word(b, "Date", js(e, "date"));
    } else {
        char d[64];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(d, sizeof d, "%a, %d %b %Y %H:%M:%S +0000", &tm);
        hdr_word(b, "Date", d);
    }
    if (js(e, "message_id") && *js(e, "message_id")) {
        hdr_word(b, "Message-ID", js(e, "message_id"));
    } else {
        char u[37];
        mb_uuid4(u);
        mb_buf_printf(b, "Message-ID: <%s@%s>\r\n", u, domain);
    }
    mb_buf_puts(b, "MIME-Version: 1.0\r\n");
    char bd[48], alt[48];
    char u[37];
    mb_uuid4(u);
    snprintf(bd, sizeof bd, "=_mixed_%s", u);
    snprintf(alt, sizeof alt, "=_alt_%s", u);
    int has_html = html && *html, n_att = (int)json_array_size(atts);
    if (!has_html && !n_att) {
        mb_buf_puts(b, "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit"
                       "\r\n\r\n");
        body_lines(b, text ? text : "");
        return;
    }
    if (n_att) mb_buf_printf(b, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\n--%s\r\n", bd, bd);
    if (has_html) {
        mb_buf_printf(b, "Content-Type: multipart/alternative; boundary=\"%s\"\r\n\r\n--%s\r\n"
                      "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit"
                      "\r\n\r\n", alt, alt);
        body_lines(b, text ? text : "");
        mb_buf_printf(b, "--%s\r\nContent-Type: text/html; charset=utf-8\r\n"
                      "Content-Transfer-Encoding: 8bit\r\n\r\n", alt);
        body_lines(b, html);
        mb_buf_printf(b, "--%s--\r\n", alt);
    } else {
        mb_buf_puts(b, "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit"
                       "\r\n\r\n");
        body_lines(b, text ? text : "");
    }
    size_t i;
    json_t *a;
    json_array_foreach(atts, i, a) {
        const char *fn = js(a, "filename"), *ct = js(a, "content_type");
        json_int_t size = json_integer_value(json_object_get(a, "size"));
        if (size < 0 || size > MAX_ATTACHMENT) size = 0;
        mb_buf_printf(b, "--%s\r\nContent-Type: %s\r\nContent-Transfer-Encoding: base64\r\n", bd,
                      ct && *ct ? ct : "application/octet-stream");
        mb_buf_puts(b, "Content-Disposition: attachment; filename=\"");
        for (const char *p = fn; *p; p++)
            if (*p != '"' && *p != '\\' && *p != '\r' && *p != '\n') mb_buf_putc(b, *p);
        mb_buf_puts(b, "\"\r\n\r\n");
        /* size zero bytes, base64: "AAAA" per 3 bytes */
        json_int_t full = size / 3, rest = size % 3, col = 0;
        for (json_int_t k = 0; k < full; k++) {
            mb_buf_puts(b, "AAAA");
            if ((col += 4) == 76) {
                mb_buf_puts(b, "\r\n");
                col = 0;
            }
        }
        if (rest) mb_buf_puts(b, rest == 1 ? "AA==" : "AAA=");
        mb_buf_puts(b, "\r\n");
    }
    if (n_att) mb_buf_printf(b, "--%s--\r\n", bd);
}

/* Validates the body; 0, or MB_EINVAL with *detail (422). */
static int validate(mb_mail *m, const char *domain, json_t *data, json_t **detail_out)
{
    json_t *d = json_array();
    json_t *users = json_object_get(data, "users");
    if (!json_is_object(data) || (users && !json_is_object(users))) {
        detail(d, json_pack("[s,s]", "body", "users"), "Input should be a valid dictionary",
               "dict_type");
    } else {
        const char *email;
        json_t *u;
        size_t total = 0;
        json_object_foreach(users, email, u) {
            char local[65], dom[MB_MAIL_DOMAIN_MAX + 1];
            if (mb_mail__addr_split(email, strlen(email), local, sizeof local, dom, sizeof dom) ||
                strcmp(dom, domain) || !mb_mail__user_known(m, local)) {
                char *msg = mb_asprintf("not a user of this sandbox's mail domain %s", domain);
                detail(d, json_pack("[s,s,s]", "body", "users", email), msg, "value_error");
                free(msg);
                continue;
            }
            json_t *emails = json_object_get(u, "emails");
            if (!json_is_array(emails)) {
                detail(d, json_pack("[s,s,s,s]", "body", "users", email, "emails"),
                       "Input should be a valid list", "list_type");
                continue;
            }
            size_t i;
            json_t *e;
            json_array_foreach(emails, i, e) {
                total++;
                static const char *const req[] = {"subject", "from_addr", "to_addr"};
                for (size_t k = 0; k < 3; k++)
                    if (!json_is_string(json_object_get(e, req[k])))
                        detail(d, json_pack("[s,s,s,s,I,s]", "body", "users", email, "emails",
                                            (json_int_t)i, req[k]),
                               json_object_get(e, req[k]) ? "Input should be a valid string"
                                                          : "Field required",
                               json_object_get(e, req[k]) ? "string_type" : "missing");
                static const char *const opt[] = {"cc_addr", "bcc_addr", "date", "message_id",
                                                  "body_text", "body_html", "folder", "email_id"};
                for (size_t k = 0; k < 8; k++) {
                    json_t *x = json_object_get(e, opt[k]);
                    if (x && !json_is_string(x) && !json_is_null(x))
                        detail(d, json_pack("[s,s,s,s,I,s]", "body", "users", email, "emails",
                                            (json_int_t)i, opt[k]),
                               "Input should be a valid string", "string_type");
                }
                const char *f = js(e, "folder");
                if (f && !folder_ok(f))
                    detail(d, json_pack("[s,s,s,s,I,s]", "body", "users", email, "emails",
                                        (json_int_t)i, "folder"),
                           "a folder name of printable ASCII without '/', '&' or a leading '.'",
                           "value_error");
                json_t *atts = json_object_get(e, "attachments");
                size_t ai;
                json_t *a;
                json_array_foreach(atts, ai, a) if (!json_is_string(json_object_get(a, "filename")))
                    detail(d, json_pack("[s,s,s,s,I,s,I,s]", "body", "users", email, "emails",
                                        (json_int_t)i, "attachments", (json_int_t)ai, "filename"),
                           "Field required", "missing");
            }
        }
        if (total > MAX_EMAILS)
            detail(d, json_pack("[s,s]", "body", "users"), "too many emails (at most 100000)",
                   "value_error");
    }
    if (json_array_size(d)) {
        *detail_out = d;
        return MB_EINVAL;
    }
    json_decref(d);
    return MB_OK;
}

static int write_user(mb_mail *m, const char *domain, const char *local, json_t *emails,
                      mb_err *err)
{
    char *home = user_home(m, domain, local);
    char *maildir = mb_asprintf("%s/Maildir", home);
    mb_rm_rf(home, NULL);
    int rc = MB_OK;
    if (mkdir(home, 0700) != 0 && errno != EEXIST) rc = mb_err_sys(err, errno, "mkdir %s", home);
    if (!rc && chown(home, m->mail_uid, m->mail_gid) != 0) rc = mb_err_sys(err, errno, "chown");
    if (!rc) rc = mkfolder(m, maildir, "INBOX", err);
    mb_buf subs = {0};
    for (size_t i = 0; !rc && i < 4; i++) {
        rc = mkfolder(m, maildir, DEFAULT_FOLDERS[i], err);
        mb_buf_printf(&subs, "%s\n", DEFAULT_FOLDERS[i]);
    }
    size_t i;
    json_t *e;
    unsigned seq = 0;
    double base = mb_now();
    json_array_foreach(emails, i, e) {
        if (rc) break;
        const char *folder = js(e, "folder") && *js(e, "folder") ? js(e, "folder") : "INBOX";
        char *fd = folder_dir(maildir, folder);
        struct stat st;
        if (stat(fd, &st) != 0) {
            rc = mkfolder(m, maildir, folder, err);
            mb_buf_printf(&subs, "%s\n", folder);
        }
        mb_buf msg = {0};
        build(e, domain, &msg);
        char flags[4] = "";
        if (json_is_true(json_object_get(e, "is_important"))) strcat(flags, "F");
        if (json_is_true(json_object_get(e, "is_read"))) strcat(flags, "S");
        /* names sort in the order given: Dovecot numbers them that way */
        char *path = mb_asprintf("%s/cur/%lld.M%06uP%dQ%u.mcpbox,S=%zu:2,%s", fd,
                                 (long long)base, seq, (int)getpid(), seq, msg.len, flags);
        seq++;
        if (!rc) rc = mb_mail__write_file(path, msg.data, msg.len, 0600, err);
        if (!rc && chown(path, m->mail_uid, m->mail_gid) != 0)
            rc = mb_err_sys(err, errno, "chown %s", path);
        free(path);
        free(fd);
        mb_buf_free(&msg);
    }
    if (!rc) {
        char *sp = mb_asprintf("%s/subscriptions", maildir);
        rc = mb_mail__write_file(sp, subs.data ? subs.data : "", subs.len, 0600, err);
        if (!rc && chown(sp, m->mail_uid, m->mail_gid) != 0) rc = mb_err_sys(err, errno, "chown");
        free(sp);
    }
    mb_buf_free(&subs);
    free(maildir);
    free(home);
    return rc;
}

static void kick_user(mb_mail *m, const char *local, const char *domain)
{
    char *who = mb_asprintf("%s@%s", local, domain);
    mb_mail__dovecot_kick_mask(m, who);
    free(who);
}

static int apply(mb_mail *m, const char *domain, json_t *data, mb_err *err)
{
    const char *email;
    json_t *u;
    json_object_foreach(json_object_get(data, "users"), email, u) {
        char local[65], dom[MB_MAIL_DOMAIN_MAX + 1];
        if (mb_mail__addr_split(email, strlen(email), local, sizeof local, dom, sizeof dom))
            continue;
        kick_user(m, local, domain);
        int rc = write_user(m, domain, local, json_object_get(u, "emails"), err);
        if (rc) return rc;
    }
    return MB_OK;
}

int mb_mail_initialize(mb_mail *m, const char *sandbox_id, json_t *data, json_t **detail_out,
                       mb_err *err)
{
    mb_mail__assert_locked(m, sandbox_id);
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    int rc = mb_mail_domain(m, sandbox_id, domain, sizeof domain, err);
    if (rc) return rc;
    json_t *empty = NULL;
    if (!data || json_is_null(data)) data = empty = json_pack("{s:{}}", "users");
    rc = validate(m, domain, data, detail_out);
    if (rc) {
        json_decref(empty);
        return mb_err_set(err, rc, "the PosteEmailData body is not valid");
    }
    rc = apply(m, domain, data, err);
    if (!rc) {
        char *p = mb_asprintf("%s/domains/%s/initial.json", m->root, domain);
        char *text = json_dumps(data, JSON_COMPACT);
        rc = mb_mail__write_file(p, text, strlen(text), 0600, err);
        free(text);
        free(p);
    }
    json_decref(empty);
    return rc;
}

int mb_mail_reset(mb_mail *m, const char *sandbox_id, mb_err *err)
{
    mb_mail__assert_locked(m, sandbox_id);
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    int rc = mb_mail_domain(m, sandbox_id, domain, sizeof domain, err);
    if (rc) return rc == MB_ENOTFOUND ? MB_OK : rc;
    mb_mail__dovecot_kick(m, domain);
    char *users = mb_asprintf("%s/domains/%s/users", m->root, domain);
    DIR *dh = opendir(users);
    struct dirent *de;
    while (dh && (de = readdir(dh))) {
        if (de->d_name[0] == '.') continue;
        char *p = mb_asprintf("%s/%s", users, de->d_name);
        mb_rm_rf(p, NULL);
        free(p);
    }
    if (dh) closedir(dh);
    free(users);
    char *p = mb_asprintf("%s/domains/%s/initial.json", m->root, domain);
    json_t *data = json_load_file(p, 0, NULL);
    free(p);
    if (data) rc = apply(m, domain, data, err);
    json_decref(data);
    return rc;
}

/* ------------------------------------------------------------------ dump */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void dump_folder(const char *dir, const char *folder, json_t *out)
{
    const char **names = NULL;
    size_t n = 0;
    static const char *const subs[] = {"new", "cur"};
    for (size_t s = 0; s < 2; s++) {
        char *d = mb_asprintf("%s/%s", dir, subs[s]);
        DIR *dh = opendir(d);
        struct dirent *de;
        while (dh && (de = readdir(dh)))
            if (de->d_name[0] != '.') mb_strv_push(&names, &n, mb_asprintf("%s/%s", subs[s], de->d_name));
        if (dh) closedir(dh);
        free(d);
    }
    if (n) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char *path = mb_asprintf("%s/%s", dir, names[i]);
        char *raw = NULL;
        size_t len = 0;
        if (mb_read_file(path, 64u << 20, &raw, &len, NULL) == MB_OK) {
            mb_mail_msg msg;
            mb_mail_msg_parse(raw, len, &msg);
            const char *info = strstr(names[i], ":2,");
            const char *fl = info ? info + 3 : "";
            json_t *e = json_object();
            char id[24];
            snprintf(id, sizeof id, "%zu", json_array_size(out) + 1);
            json_object_set_new(e, "email_id", json_string(id));
            json_object_set_new(e, "subject", json_string(msg.subject));
            json_object_set_new(e, "from_addr", json_string(msg.from_addr));
            json_object_set_new(e, "to_addr", json_string(msg.to_addr));
            json_object_set_new(e, "cc_addr", msg.cc_addr ? json_string(msg.cc_addr) : json_null());
            const char *bcc = NULL;
            for (size_t k = 0; k < msg.n_headers; k++)
                if (!strcasecmp(msg.hnames[k], "Bcc")) bcc = msg.hvalues[k];
            char *bd = bcc ? mb_mail_decode_header(bcc) : NULL;
            json_object_set_new(e, "bcc_addr", bd ? json_string(bd) : json_null());
            free(bd);
            json_object_set_new(e, "date", json_string(msg.date));
            json_object_set_new(e, "message_id", json_string(msg.message_id));
            json_object_set_new(e, "body_text", json_string(msg.body_text));
            json_object_set_new(e, "body_html", json_string(msg.body_html));
            json_object_set_new(e, "is_read", json_boolean(strchr(fl, 'S') != NULL));
            json_object_set_new(e, "is_important", json_boolean(strchr(fl, 'F') != NULL));
            json_object_set_new(e, "folder", json_string(folder));
            json_t *atts = json_array();
            for (size_t k = 0; k < msg.n_atts; k++)
                json_array_append_new(atts, json_pack("{s:s,s:s,s:I}", "filename",
                                                      msg.atts[k].filename, "content_type",
                                                      msg.atts[k].content_type, "size",
                                                      (json_int_t)msg.atts[k].size));
            json_object_set_new(e, "attachments", atts);
            json_array_append_new(out, e);
            mb_mail_msg_free(&msg);
            free(raw);
        }
        free(path);
    }
    mb_strv_free((char **)names);
}

int mb_mail_dump(mb_mail *m, const char *sandbox_id, json_t **out, mb_err *err)
{
    mb_mail__assert_locked(m, sandbox_id);
    char domain[MB_MAIL_DOMAIN_MAX + 1];
    int rc = mb_mail_domain(m, sandbox_id, domain, sizeof domain, err);
    if (rc) return rc;
    json_t *users = json_object();
    char *udir = mb_asprintf("%s/domains/%s/users", m->root, domain);
    DIR *dh = opendir(udir);
    struct dirent *de;
    const char **locals = NULL;
    size_t nl = 0;
    while (dh && (de = readdir(dh)))
        if (de->d_name[0] != '.') mb_strv_push(&locals, &nl, mb_strdup(de->d_name));
    if (dh) closedir(dh);
    if (nl) qsort(locals, nl, sizeof *locals, by_name);
    for (size_t u = 0; u < nl; u++) {
        char *maildir = mb_asprintf("%s/%s/Maildir", udir, locals[u]);
        json_t *emails = json_array();
        dump_folder(maildir, "INBOX", emails);
        DIR *fh = opendir(maildir);
        const char **folders = NULL;
        size_t nf = 0;
        while (fh && (de = readdir(fh)))
            if (de->d_name[0] == '.' && de->d_name[1] && strcmp(de->d_name, ".."))
                mb_strv_push(&folders, &nf, mb_strdup(de->d_name + 1));
        if (fh) closedir(fh);
        if (nf) qsort(folders, nf, sizeof *folders, by_name);
        for (size_t f = 0; f < nf; f++) {
            char *fd = mb_asprintf("%s/.%s", maildir, folders[f]);
            json_t *part = json_array();
            dump_folder(fd, folders[f], part);
            json_array_extend(emails, part);
            json_decref(part);
            free(fd);
        }
        mb_strv_free((char **)folders);
        char *email = mb_asprintf("%s@%s", locals[u], domain);
        json_object_set_new(users, email, json_pack("{s:o}", "emails", emails));
        free(email);
        free(maildir);
    }
    mb_strv_free((char **)locals);
    free(udir);
    *out = json_pack("{s:o}", "users", users);
    return MB_OK;
}
