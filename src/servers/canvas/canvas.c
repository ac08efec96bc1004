/*
 * canvas.c - `mcpbox mcp canvas`: canvas-mcp-server 2.2.3 (the Toolathlon
 * fork lockon-n/mcp-canvas-lms @1097704) over mcpbox's Canvas service. Each
 * tool makes the REST calls the fork's CanvasClient makes, through the
 * sandbox's socket (MCPBOX_CANVAS_SOCKET, set by the profile) or a database
 * opened in-process (--db FILE, for standalone use and tests), and answers
 * with the fork's texts.
 */
#include "servers/canvas/canvas_int.h"
#include "servers/servers.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ JS values */

json_t *cs_arg(tx *t, const char *key)
{
    json_t *v = json_object_get(t->args, key);
    return v;
}

int cs_falsy(const json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v)) return 1;
    if (json_is_string(v)) return !*json_string_value(v);
    if (json_is_number(v)) {
        double d = json_number_value(v);
        return d == 0 || d != d;
    }
    return 0;
}

char *cs_str(const json_t *v)
{
    if (!v) return mb_strdup("undefined");
    if (json_is_string(v)) return mb_strdup(json_string_value(v));
    if (json_is_number(v)) return mb_js_number(json_number_value(v));
    if (json_is_true(v)) return mb_strdup("true");
    if (json_is_false(v)) return mb_strdup("false");
    if (json_is_null(v)) return mb_strdup("null");
    if (json_is_array(v)) {
        mb_buf b = {0};
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i) mb_buf_putc(&b, ',');
            if (!json_is_null(x)) {
                char *s = cs_str(x);
                mb_buf_puts(&b, s);
                free(s);
            }
        }
        mb_buf_putc(&b, 0);
        return mb_buf_steal(&b);
    }
    return mb_strdup("[object Object]");
}

/* ------------------------------------------------------------ requests */

static void escape(mb_buf *b, const char *s)
{
    /* axios: encodeURIComponent, then : $ , + [ ] and %20 as + */
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-_.!~*'():$,[]", ch))
            mb_buf_putc(b, (char)ch);
        else if (ch == ' ')
            mb_buf_putc(b, '+');
        else {
            mb_buf_putc(b, '%');
            mb_buf_putc(b, hex[ch >> 4]);
            mb_buf_putc(b, hex[ch & 15]);
        }
    }
}

static void query_one(mb_buf *b, const char *key, const json_t *v)
{
    if (!v || json_is_null(v)) return;
    mb_buf_putc(b, b->len ? '&' : '?');
    escape(b, key);
    mb_buf_putc(b, '=');
    char *s = json_is_object(v) ? mb_js_stringify(v, 0) : cs_str(v);
    escape(b, s);
    free(s);
}

static char *with_query(const char *path, json_t *query)
{
    mb_buf q = {0};
    const char *key;
    json_t *v;
    json_object_foreach(query, key, v) {
        if (json_is_array(v)) {
            char *k = mb_asprintf("%s[]", key);
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) query_one(&q, k, x);
            free(k);
        } else {
            query_one(&q, key, v);
        }
    }
    mb_buf_putc(&q, 0);
    char *out = mb_asprintf("%s%s", path, q.data);
    mb_buf_free(&q);
    return out;
}

/* The target of rel="next" as a path after /api/v1, or NULL. */
static char *next_link(const char *link)
{
    if (!link) return NULL;
    const char *p = link;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *part = mb_strndup(p, n);
        char *found = NULL;
        if (strstr(part, "rel=\"next\"")) {
            char *lt = strchr(part, '<'), *gt = lt ? strchr(lt, '>') : NULL;
            char *api = lt ? strstr(lt, "/api/v1") : NULL;
            if (gt && api && api < gt) found = mb_strndup(api + 7, (size_t)(gt - api - 7));
        }
        free(part);
        if (found) return found;
        if (!end) break;
        p = end + 1;
    }
    return NULL;
}

static char *error_message(int status, json_t *data)
{
    char *msg;
    json_t *m = json_object_get(data, "message");
    json_t *errs = json_object_get(data, "errors");
    if (json_is_string(data)) {
        const char *s = json_string_value(data);
        msg = strlen(s) > 200 ? mb_asprintf("%.200s...", s) : mb_strdup(s);
    } else if (json_is_object(data) && m && !cs_falsy(m)) {
        msg = cs_str(m);
    } else if (json_is_object(data) && json_is_array(errs)) {
        mb_buf b = {0};
        size_t i;
        json_t *e;
        json_array_foreach(errs, i, e) {
            if (i) mb_buf_puts(&b, ", ");
            json_t *em = json_object_get(e, "message");
            char *s = em && !cs_falsy(em) ? cs_str(em) : json_is_null(e) ? mb_strdup("") : cs_str(e);
            mb_buf_puts(&b, s);
            free(s);
        }
        mb_buf_putc(&b, 0);
        msg = mb_buf_steal(&b);
    } else {
        msg = mb_js_stringify(data, 0);
    }
    char *out = mb_asprintf("Canvas API Error (%d): %s", status, msg);
    free(msg);
    return out;
}

json_t *cs_api_raw(tx *t, const char *method, const char *path, json_t *query, json_t *body,
                   char **link, int *status)
{
    char *pq = with_query(path, query);
    mb_canvas_resp r;
    mb_err err = {0};
    int rc = mb_canvas_client_call(t->s->cl, method, pq, body, &r, &err);
    free(pq);
    if (rc) {
        free(t->err);
        t->err = mb_asprintf("Network error: %s", err.msg);
        return NULL;
    }
    if (status) *status = r.status;
    if (r.status >= 400) {
        free(t->err);
        t->err = error_message(r.status, r.body);
        mb_canvas_resp_free(&r);
        return NULL;
    }
    if (link) *link = r.link ? mb_strdup(r.link) : NULL;
    json_t *data = r.body;
    r.body = NULL;
    mb_canvas_resp_free(&r);
    return data;
}

json_t *cs_api(tx *t, const char *method, const char *path, json_t *query, json_t *body)
{
    char *link = NULL;
    json_t *data = cs_api_raw(t, method, path, query, body, &link, NULL);
    /* The response interceptor: JSON arrays follow rel="next" (1000 pages at most). */
    for (int pages = 1; data && json_is_array(data) && link && pages < 1000; pages++) {
        char *next = next_link(link);
        free(link);
        link = NULL;
        if (!next) break;
        json_t *more = cs_api_raw(t, "GET", next, NULL, NULL, &link, NULL);
        free(next);
        if (!more) {
            json_decref(data);
            data = NULL;
            break;
        }
        json_array_extend(data, more);
        json_decref(more);
    }
    free(link);
    return data;
}

/* ------------------------------------------------------------ results */

int cs_done(tx *t, json_t *v)
{
    if (!v) { /* JSON.stringify(undefined): a text block without text */
        mb_mcp_content(t->res, json_pack("{s:s}", "type", "text"));
        return 0;
    }
    char *s = mb_js_stringify(v, 2);
    json_decref(v);
    mb_mcp_text(t->res, s);
    free(s);
    return 0;
}

int cs_text(tx *t, const char *text)
{
    mb_mcp_text(t->res, text);
    return 0;
}

int cs_fail(tx *t)
{
    char *s = mb_asprintf("Error: %s", t->err ? t->err : "Unknown error");
    mb_mcp_text(t->res, s);
    mb_mcp_set_is_error(t->res, 1);
    free(s);
    free(t->err);
    t->err = NULL;
    return 0;
}

int cs_throw(tx *t, const char *msg)
{
    free(t->err);
    t->err = mb_strdup(msg);
    return cs_fail(t);
}

static int unknown_tool(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)args;
    tx t = {mb_mcp_call_data(call), NULL, res, NULL};
    char *m = mb_asprintf("Unknown tool: %s", mb_mcp_call_tool(call));
    cs_throw(&t, m);
    free(m);
    return 0;
}

/* ------------------------------------------------------------ server */

static const mb_mcp_info INFO = {
    .name = "canvas-mcp-server",
    .version = "2.2.3",
    .flavor = MB_MCP_TS_SERVER,
    .capabilities = "{\"tools\":{}}",
    .unknown_tool = unknown_tool,
};

static void cs_free(void *p)
{
    cs *s = p;
    if (!s) return;
    mb_canvas_client_free(s->cl);
    for (size_t i = 0; i < s->n_sessions; i++) json_decref(s->sessions[i].params);
    free(s->sessions);
    free(s);
}

int mb_srv_canvas_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    const char *db = NULL, *sock = getenv(MB_CANVAS_SOCK_ENV), *users = NULL;
    const char *token = getenv("CANVAS_API_TOKEN");
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"socket", required_argument, NULL, 's'},
                                         {"users", required_argument, NULL, 'u'},
                                         {"token", required_argument, NULL, 't'},
                                         {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': sock = optarg; break;
        case 'u': users = optarg; break;
        case 't': token = optarg; break;
        default: return mb_err_set(err, MB_EINVAL, "usage: mcpbox mcp canvas [--socket PATH | --db FILE [--users FILE]] [--token T]");
        }
    }
    if (!db && (!sock || !*sock))
        return mb_err_set(err, MB_EINVAL, "canvas: no Canvas to talk to: set %s (the sandbox's"
                                          " socket) or pass --db FILE", MB_CANVAS_SOCK_ENV);
    cs *s = mb_calloc(1, sizeof *s);
    int rc;
    if (db) {
        /* A new database file gets the users of --users (or one admin). */
        FILE *f = fopen(db, "r");
        int fresh = !f;
        if (f) fclose(f);
        rc = mb_canvas_client_db(db, token, &s->cl, err);
        if (!rc && fresh) {
            mb_canvas_users *u = NULL;
            if (users) rc = mb_canvas_users_load(users, &u, err);
            else u = mb_canvas_users_generated();
            if (!rc) {
                mb_canvas_client_free(s->cl);
                s->cl = NULL;
                mb_canvas_db *h;
                rc = mb_canvas_db_open(db, &h, err);
                if (!rc) {
                    rc = mb_canvas_db_seed(h, u, err);
                    mb_canvas_db_close(h);
                }
                if (!rc) rc = mb_canvas_client_db(db, token, &s->cl, err);
            }
            mb_canvas_users_free(u);
        }
    } else {
        rc = mb_canvas_client_socket(sock, token, &s->cl, err);
    }
    if (rc) {
        cs_free(s);
        return rc;
    }
    return mb_mcp_server_new_with_tools(&INFO, mb_canvas__tools, s, cs_free, out, err);
}
