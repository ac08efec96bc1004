/*
 * conn.c - the client's connection to a daemon: one REST call with libcurl,
 * and the mapping of failures to exit statuses and to messages that say
 * what to do.
 */
#include "cli/client/client.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ a request */

typedef struct sink {
    mb_buf buf;
    size_t cap;
    int over;
} sink;

static size_t sink_write(char *p, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t n = size * nmemb;
    if (s->buf.len + n > s->cap) {
        s->over = 1;
        return 0;
    }
    mb_buf_append(&s->buf, p, n);
    return n;
}

void *mb_cl_handle(mb_cl *cl)
{
    if (!cl->curl) cl->curl = curl_easy_init();
    if (!cl->curl) {
        fprintf(stderr, "mcpbox: cannot initialise libcurl\n");
        abort();
    }
    curl_easy_reset(cl->curl);
    CURL *c = cl->curl;
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, cl->timeout_s);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "mcpbox-cli/0.1.0");
    return c;
}

/* The message and status for a transfer libcurl could not complete. */
int mb_cl_transport_error(mb_cl *cl, const char *url, int code, const char *errbuf)
{
    CURLcode rc = (CURLcode)code;
    const char *why = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return mb_cl_fail(cl, MB_CL_UNREACHABLE,
                          "cannot reach the mcpbox daemon at %s (%s).\n"
                          "Is `mcpbox serve` running at %s? Start it with `make run` or "
                          "`mcpbox serve --listen ADDR:PORT`, or point --url / MCPBOX_URL at "
                          "the daemon.",
                          url, why, cl->url);
    case CURLE_OPERATION_TIMEDOUT:
        return mb_cl_fail(cl, MB_CL_UNREACHABLE,
                          "no answer from %s within the timeout (%s); is `mcpbox serve` at %s "
                          "overloaded or stopped? A longer --timeout may help.",
                          url, why, cl->url);
    case CURLE_UNSUPPORTED_PROTOCOL:
        return mb_cl_fail(cl, MB_CL_FAIL, "the daemon handed out a URL that is not http(s): %s",
                          url);
    default:
        return mb_cl_fail(cl, MB_CL_UNREACHABLE,
                          "the connection to %s failed: %s. Is `mcpbox serve` running at %s?",
                          url, why, cl->url);
    }
}

/* "loc: msg; loc: msg" of a FastAPI 422 detail list, or the detail text. */
static void detail_text(const json_t *body, mb_buf *out)
{
    const json_t *d = json_is_object(body) ? json_object_get(body, "detail") : NULL;
    if (json_is_string(d)) {
        mb_buf_puts(out, json_string_value(d));
        return;
    }
    if (!json_is_array(d)) return;
    size_t i;
    const json_t *item;
    json_array_foreach(d, i, item) {
        if (i >= 8) break;
        if (i) mb_buf_puts(out, "; ");
        const json_t *loc = json_object_get(item, "loc");
        size_t j;
        const json_t *part;
        int first = 1;
        json_array_foreach(loc, j, part) {
            if (json_is_string(part) && !strcmp(json_string_value(part), "body")) continue;
            if (!first) mb_buf_putc(out, '.');
            first = 0;
            if (json_is_string(part)) mb_buf_puts(out, json_string_value(part));
            else if (json_is_integer(part)) mb_buf_printf(out, "%lld", (long long)json_integer_value(part));
        }
        if (!first) mb_buf_puts(out, ": ");
        mb_buf_puts(out, mb_cl_str(item, "msg"));
    }
}

/* The first characters of a key, for messages. */
static void key_hint(const char *key, char out[24])
{
    snprintf(out, 24, "%.8s...", key);
}

int mb_cl_http_error(mb_cl *cl, long status, const char *raw, size_t len, const char *sandbox)
{
    mb_buf d = {0};
    json_t *body = len ? json_loadb(raw, len, 0, NULL) : NULL;
    detail_text(body, &d);
    json_decref(body);
    if (!d.len) mb_buf_append(&d, raw ? raw : "", mb_utf8_cut(raw ? raw : "", len, 200));
    const char *detail = d.len ? d.data : "(no detail)";
    char hint[24];
    int rc;
    if (status == 401) {
        rc = mb_cl_fail(cl, MB_CL_AUTH,
                        "the daemon at %s wants an API key (%s).\n"
                        "Set it with `export MCPBOX_API_KEY=mbx_...` or --key; create one with "
                        "`mcpbox keys create --data-dir DIR` on the daemon's host.",
                        cl->url, detail);
    } else if (status == 403 && cl->key && !sandbox) {
        key_hint(cl->key, hint);
        rc = mb_cl_fail(cl, MB_CL_AUTH,
                        "the daemon at %s refused the API key %s (%s).\n"
                        "Set MCPBOX_API_KEY to a valid key (`mcpbox keys list` shows them, "
                        "`mcpbox keys create --data-dir DIR` makes one).",
                        cl->url, hint, detail);
    } else if (status == 403 && cl->key) {
        key_hint(cl->key, hint);
        rc = mb_cl_fail(cl, MB_CL_AUTH,
                        "the daemon at %s refused the request for %s with key %s (%s).\n"
                        "If the key is wrong, set MCPBOX_API_KEY to a valid one (`mcpbox keys "
                        "list`).",
                        cl->url, sandbox, hint, detail);
    } else if (status == 404 && sandbox) {
        rc = mb_cl_fail(cl, MB_CL_NOTFOUND,
                        "%s.\nNo sandbox %s is alive for this key at %s (released, expired, or "
                        "acquired with another owner's key); `mcpbox ls` lists yours.",
                        detail, sandbox, cl->url);
    } else if (status == 404) {
        rc = mb_cl_fail(cl, MB_CL_NOTFOUND, "%s (HTTP 404 from %s): is %s an mcpbox daemon?",
                        detail, cl->url, cl->url);
    } else if (status == 429) {
        rc = mb_cl_fail(cl, MB_CL_REFUSED, "%s (HTTP 429): over a limit; release sandboxes "
                        "you no longer need (`mcpbox ls`, `mcpbox rm ID`) or retry later",
                        detail);
    } else if (status >= 400 && status < 500) {
        rc = mb_cl_fail(cl, MB_CL_REFUSED, "%s (HTTP %ld)", detail, status);
    } else {
        rc = mb_cl_fail(cl, MB_CL_FAIL, "the daemon at %s failed: %s (HTTP %ld); its log says "
                        "more", cl->url, detail, status);
    }
    mb_buf_free(&d);
    return rc;
}

int mb_cl_api(mb_cl *cl, const char *method, const char *path, json_t *body,
              const char *sandbox, json_t **out)
{
    if (out) *out = NULL;
    if (!cl->key)
        return mb_cl_fail(cl, MB_CL_AUTH,
                          "no API key: set one with `export MCPBOX_API_KEY=mbx_...` or --key "
                          "(`make run` prints one on its first start; `mcpbox keys create "
                          "--data-dir DIR` makes more)");
    if (strpbrk(cl->key, "\r\n"))
        return mb_cl_fail(cl, MB_CL_USAGE, "the API key holds a line break; check MCPBOX_API_KEY");
    CURL *c = mb_cl_handle(cl);
    char *url = mb_asprintf("%s%s", cl->url, path);
    char *auth = mb_asprintf("Authorization: Bearer %s", cl->key);
    struct curl_slist *hdrs = curl_slist_append(NULL, auth);
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    char *text = NULL;
    if (body) {
        text = json_dumps(body, JSON_COMPACT);
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
    } else if (!strcmp(method, "POST")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "GET")) curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    sink s = {.cap = MB_CL_MAX_API_BYTES};
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    CURLcode crc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    free(auth);
    free(text);
    int rc = MB_CL_OK;
    json_t *j = NULL;
    if (s.over) {
        rc = mb_cl_fail(cl, MB_CL_FAIL, "the answer from %s is over %u MiB; is %s an mcpbox "
                        "daemon?", url, MB_CL_MAX_API_BYTES >> 20, cl->url);
    } else if (crc != CURLE_OK) {
        rc = mb_cl_transport_error(cl, url, crc, errbuf);
    } else {
        json_error_t je = {0};
        int ok = status >= 200 && status < 300;
        if (ok && s.buf.len) j = json_loadb(s.buf.data, s.buf.len, 0, &je);
        if (status == 404 && cl->quiet_404) {
            rc = MB_CL_NOTFOUND;
        } else if (!ok) {
            rc = mb_cl_http_error(cl, status, s.buf.data, s.buf.len, sandbox);
        } else if (!json_is_object(j)) {
            rc = mb_cl_fail(cl, MB_CL_FAIL, "the answer from %s (HTTP %ld) is not a JSON object"
                            "%s%s; is %s an mcpbox daemon?", url, status, j ? "" : ": ",
                            j ? "" : (s.buf.len ? je.text : "empty body"), cl->url);
        } else if (out) {
            *out = j;
            j = NULL;
        }
    }
    json_decref(j);
    mb_buf_free(&s.buf);
    free(url);
    return rc;
}

int mb_cl_valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_'))
            return 0;
    }
    return 1;
}

int mb_cl_resolve_id(mb_cl *cl, const char *arg, char **id)
{
    *id = NULL;
    size_t n = strlen(arg);
    int ok = n > 0 && n <= 36;
    for (size_t i = 0; ok && i < n; i++)
        ok = (arg[i] >= '0' && arg[i] <= '9') || (arg[i] >= 'a' && arg[i] <= 'f') ||
             (arg[i] >= 'A' && arg[i] <= 'F') || arg[i] == '-';
    if (!ok)
        return mb_cl_fail(cl, MB_CL_USAGE, "'%s' is not a sandbox id (a UUID, or the start of "
                          "one; `mcpbox ls` lists yours)", arg);
    char lower[37];
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)(arg[i] >= 'A' && arg[i] <= 'F' ? arg[i] - 'A' + 'a' : arg[i]);
    if (mb_is_uuid(lower)) {
        *id = mb_strdup(lower);
        return MB_CL_OK;
    }
    json_t *list = NULL;
    int rc = mb_cl_api(cl, "GET", "/local-sandbox", NULL, NULL, &list);
    if (rc) return rc;
    const json_t *arr = json_object_get(list, "local_sandboxes");
    size_t i, matches = 0;
    const json_t *item;
    const char *found = NULL;
    json_array_foreach(arr, i, item) {
        const char *sid = mb_cl_str(item, "local_sandbox_id");
        if (*sid && mb_str_has_prefix(sid, lower)) {
            matches++;
            found = sid;
        }
    }
    if (matches == 1) *id = mb_strdup(found);
    else if (matches == 0)
        rc = mb_cl_fail(cl, MB_CL_NOTFOUND, "no sandbox of yours at %s has an id starting with "
                        "'%s'; `mcpbox ls` lists yours", cl->url, lower);
    else
        rc = mb_cl_fail(cl, MB_CL_USAGE, "'%s' starts %zu of your sandbox ids; give more of it",
                        lower, matches);
    json_decref(list);
    return rc;
}
