/*
 * users.c - the users every mail domain gets (--mail-users FILE, the shape of
 * Toolathlon's configs/users_data.json: {"users": [{"email", "password",
 * "full_name"?}, ...]}; the file's own domain is ignored, each user is
 * provisioned as local@<the sandbox's domain>), and the address rules.
 */
#define _GNU_SOURCE
#include "mail/mail_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define USERS_MAX 100000

int mb_mail__domain_norm(const char *in, char *out, size_t cap)
{
    size_t n = strlen(in);
    if (n == 0 || n >= cap || n > 253) return MB_EINVAL;
    int prev_dot = 1, dots = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '.') {
            if (prev_dot) return MB_EINVAL;
            prev_dot = 1;
            dots++;
        } else if (isalnum(c) || c == '-') {
            prev_dot = 0;
        } else {
            return MB_EINVAL;
        }
        out[i] = (char)tolower(c);
    }
    if (prev_dot || !dots) return MB_EINVAL;
    out[n] = 0;
    return MB_OK;
}

/* Local parts: what Dovecot's default auth_username_chars allow, less '@'. */
static int local_ok(const char *s, size_t n)
{
    if (n == 0 || n > 64) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != '+') return 0;
    }
    return 1;
}

int mb_mail__addr_split(const char *addr, size_t len, char *local, size_t lcap, char *domain,
                        size_t dcap)
{
    const char *at = memrchr(addr, '@', len);
    if (!at || memchr(addr, 0, len)) return MB_EINVAL;
    size_t ln = (size_t)(at - addr), dn = len - ln - 1;
    if (!local_ok(addr, ln) || ln >= lcap || dn == 0 || dn >= dcap) return MB_EINVAL;
    char d[MB_MAIL_DOMAIN_MAX + 1];
    if (dn > MB_MAIL_DOMAIN_MAX) return MB_EINVAL;
    memcpy(d, at + 1, dn);
    d[dn] = 0;
    if (mb_mail__domain_norm(d, domain, dcap)) return MB_EINVAL;
    for (size_t i = 0; i < ln; i++) local[i] = (char)tolower((unsigned char)addr[i]);
    local[ln] = 0;
    return MB_OK;
}

static int pw_ok(const char *s)
{
    if (!*s || strlen(s) > 256) return 0;
    for (; *s; s++)
        if (*s == ':' || *s == '\n' || *s == '\r' || (unsigned char)*s < 0x20) return 0;
    return 1;
}

int mb_mail__users_load(mb_mail *m, const char *path, mb_err *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc)
        return mb_err_set(err, MB_EINVAL, "--mail-users %s: %s (line %d)", path, je.text, je.line);
    json_t *users = json_object_get(doc, "users");
    if (!json_is_array(users) || json_array_size(users) > USERS_MAX) {
        json_decref(doc);
        return mb_err_set(err, MB_EINVAL, "--mail-users %s: wants {\"users\": [{\"email\", "
                          "\"password\"}, ...]} (at most %d users)", path, USERS_MAX);
    }
    size_t n = json_array_size(users);
    m->users = mb_calloc(n ? n : 1, sizeof *m->users);
    int rc = MB_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *u = json_array_get(users, i);
        const char *email = json_string_value(json_object_get(u, "email"));
        const char *pw = json_string_value(json_object_get(u, "password"));
        const char *name = json_string_value(json_object_get(u, "full_name"));
        char local[65], dom[MB_MAIL_DOMAIN_MAX + 1];
        if (!email || mb_mail__addr_split(email, strlen(email), local, sizeof local, dom,
                                          sizeof dom)) {
            rc = mb_err_set(err, MB_EINVAL, "--mail-users %s: users[%zu]: \"email\" is not an "
                            "address like name@mcp.com", path, i);
        } else if (!pw || !pw_ok(pw)) {
            rc = mb_err_set(err, MB_EINVAL, "--mail-users %s: users[%zu] (%s): \"password\" must "
                            "be 1-256 characters without ':' or control characters", path, i,
                            email);
        } else if (mb_mail__user_known(m, local)) {
            rc = mb_err_set(err, MB_EINVAL, "--mail-users %s: users[%zu]: %s appears twice", path,
                            i, local);
        } else {
            mb_mail_user *mu = &m->users[m->n_users++];
            mu->local = mb_strdup(local);
            mu->password = mb_strdup(pw);
            mu->name = mb_strdup(name && mb_utf8_valid(name, strlen(name)) ? name : "");
        }
    }
    json_decref(doc);
    return rc;
}

void mb_mail__users_free(mb_mail *m)
{
    for (size_t i = 0; i < m->n_users; i++) {
        free(m->users[i].local);
        free(m->users[i].password);
        free(m->users[i].name);
    }
    free(m->users);
    m->users = NULL;
    m->n_users = 0;
}

void mb_mail__passwd_render(mb_mail *m, const char *domain, mb_buf *out)
{
    for (size_t i = 0; i < m->n_users; i++)
        mb_buf_printf(out, "%s@%s:{PLAIN}%s::::::\n", m->users[i].local, domain,
                      m->users[i].password);
}

int mb_mail__user_known(mb_mail *m, const char *local)
{
    for (size_t i = 0; i < m->n_users; i++)
        if (!strcasecmp(m->users[i].local, local)) return 1;
    return 0;
}
