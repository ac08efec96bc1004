/*
 * mcp.c - a small MCP Streamable-HTTP client for `mcpbox tools` and `mcpbox
 * call`: initialize (the session id and protocol version kept),
 * notifications/initialized, then requests whose answers come back as JSON
 * or as an SSE stream (progress and log notifications on the way are
 * passed over), and DELETE of the session at the end.
 *
 * The client declares no capabilities, so servers send it no requests of
 * their own (sampling, roots, elicitation). Every message is capped at
 * MB_CL_MAX_MCP_BYTES.
 */
#include "cli/client/client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CLIENT_PROTOCOL "2025-06-18"

struct mb_cl_mcp {
    mb_cl *cl;
    char *url;
    char session[256];
    char version[32];
    json_int_t next_id;
};

/* One POST's answer as it arrives. */
typedef struct answer {
    json_int_t want_id;
    int sse;         /* Content-Type: text/event-stream */
    char session[256];
    mb_buf body;     /* JSON body, or the SSE line being read */
    size_t scanned;  /* SSE: bytes of body known to hold no newline */
    mb_buf data;     /* the SSE event's data so far */
    int over;        /* a message over the cap */
    int bad_event;   /* an SSE event that is not JSON */
    json_t *reply;   /* the response to want_id */
} answer;

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    answer *a = ud;
    size_t n = size * nmemb;
    const char *colon = memchr(p, ':', n);
    if (!colon) return n;
    size_t name = (size_t)(colon - p);
    const char *v = colon + 1, *end = p + n;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    size_t vlen = (size_t)(end - v);
    if (name == 14 && !strncasecmp(p, "mcp-session-id", 14) && vlen < sizeof a->session) {
        for (size_t i = 0; i < vlen; i++)
            if (v[i] < 0x21 || v[i] > 0x7e) return n; /* the spec: visible ASCII only */
        memcpy(a->session, v, vlen);
        a->session[vlen] = '\0';
    } else if (name == 12 && !strncasecmp(p, "content-type", 12)) {
        a->sse = vlen >= 17 && !strncasecmp(v, "text/event-stream", 17);
    }
    return n;
}

/* A complete JSON-RPC message: kept if it answers our request. */
static void on_message(answer *a, const char *text, size_t len)
{
    json_t *j = json_loadb(text, len, 0, NULL);
    if (!j) {
        a->bad_event = 1;
        return;
    }
    const json_t *id = json_object_get(j, "id");
    if (!a->reply && json_is_integer(id) && json_integer_value(id) == a->want_id &&
        (json_object_get(j, "result") || json_object_get(j, "error"))) {
        a->reply = j;
        return;
    }
    json_decref(j);
}

/* One SSE line (without its end of line). */
static void on_sse_line(answer *a, const char *line, size_t len)
{
    if (len == 0) {
        if (a->data.len) on_message(a, a->data.data, a->data.len);
        mb_buf_reset(&a->data);
        return;
    }
    if (len >= 5 && !memcmp(line, "data:", 5)) {
        const char *v = line + 5;
        size_t vl = len - 5;
        if (vl && *v == ' ') v++, vl--;
        if (a->data.len + vl + 1 > MB_CL_MAX_MCP_BYTES) {
            a->over = 1;
            return;
        }
        if (a->data.len) mb_buf_putc(&a->data, '\n');
        mb_buf_append(&a->data, v, vl);
    }
    /* event:, id:, retry: and comments (keep-alives) need nothing. */
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    answer *a = ud;
    size_t n = size * nmemb;
    if (a->reply) return 0; /* answered: stop reading the stream */
    if (a->body.len + n > MB_CL_MAX_MCP_BYTES) {
        a->over = 1;
        return 0;
    }
    mb_buf_append(&a->body, p, n);
    if (!a->sse) return n;
    size_t start = 0;
    for (size_t i = a->scanned; i < a->body.len && !a->over; i++) {
        if (a->body.data[i] != '\n') continue;
        size_t e = i;
        if (e > start && a->body.data[e - 1] == '\r') e--;
        on_sse_line(a, a->body.data + start, e - start);
        start = i + 1;
    }
    mb_buf_consume(&a->body, start);
    a->scanned = a->body.len;
    if (a->over) return 0;
    return a->reply ? 0 : n;
}

/* POSTs msg; for a request (want_id >= 0) *reply gets its response. */
static int post(mb_cl_mcp *m, json_t *msg, json_int_t want_id, json_t **reply)
{
    mb_cl *cl = m->cl;
    CURL *c = mb_cl_handle(cl);
    char *text = json_dumps(msg, JSON_COMPACT);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json, text/event-stream");
    char sid[300], ver[64];
    if (m->session[0]) {
        snprintf(sid, sizeof sid, "Mcp-Session-Id: %s", m->session);
        h = curl_slist_append(h, sid);
    }
    if (m->version[0]) {
        snprintf(ver, sizeof ver, "MCP-Protocol-Version: %s", m->version);
        h = curl_slist_append(h, ver);
    }
    answer a = {.want_id = want_id};
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, m->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode crc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    free(text);
    int rc = MB_CL_OK;
    if (a.session[0] && !m->session[0]) memcpy(m->session, a.session, sizeof m->session);
    if (a.over) {
        rc = mb_cl_fail(cl, MB_CL_FAIL, "an MCP message from %s is over %u MiB", m->url,
                        MB_CL_MAX_MCP_BYTES >> 20);
    } else if (crc != CURLE_OK && !(crc == CURLE_WRITE_ERROR && a.reply)) {
        rc = mb_cl_transport_error(cl, m->url, crc, errbuf);
    } else if (status >= 300) {
        /* A JSON-RPC error body (the gateway's) or a REST-style detail. */
        json_t *j = a.sse ? NULL : json_loadb(a.body.data ? a.body.data : "", a.body.len, 0, NULL);
        const char *emsg = mb_cl_str(json_object_get(j, "error"), "message");
        if (status == 404)
            rc = mb_cl_fail(cl, MB_CL_NOTFOUND, "%s (HTTP 404 from the MCP URL): the sandbox or "
                            "server is gone; `mcpbox get ID` shows what is there",
                            *emsg ? emsg : "not found");
        else if (*emsg)
            rc = mb_cl_fail(cl, status >= 500 ? MB_CL_FAIL : MB_CL_REFUSED, "%s (HTTP %ld)",
                            emsg, status);
        else
            rc = mb_cl_http_error(cl, status, a.body.data, a.body.len, NULL);
        json_decref(j);
    } else if (want_id >= 0 && !a.sse && !a.reply) {
        on_message(&a, a.body.data ? a.body.data : "", a.body.len);
        if (!a.reply)
            rc = mb_cl_fail(cl, MB_CL_FAIL, "the answer from %s is not the JSON-RPC response "
                            "to request %lld", m->url, (long long)want_id);
    } else if (want_id >= 0 && !a.reply) {
        rc = mb_cl_fail(cl, MB_CL_FAIL, "the event stream from %s ended without the response "
                        "to request %lld%s", m->url, (long long)want_id,
                        a.bad_event ? " (it held events that are not JSON)" : "");
    }
    if (!rc && reply) {
        *reply = a.reply;
        a.reply = NULL;
    }
    json_decref(a.reply);
    mb_buf_free(&a.body);
    mb_buf_free(&a.data);
    return rc;
}

int mb_cl_mcp_request(mb_cl_mcp *m, const char *method, json_t *params, json_t **result)
{
    *result = NULL;
    json_int_t id = m->next_id++;
    json_t *msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", id, "method", method);
    if (params) json_object_set(msg, "params", params);
    json_t *reply = NULL;
    int rc = post(m, msg, id, &reply);
    json_decref(msg);
    if (rc) return rc;
    const json_t *err = json_object_get(reply, "error");
    const json_t *res = json_object_get(reply, "result");
    if (err) {
        const json_t *code = json_object_get(err, "code");
        json_int_t c = json_is_integer(code) ? json_integer_value(code) : 0;
        rc = mb_cl_fail(m->cl, c == -32602 || c == -32601 ? MB_CL_REFUSED : MB_CL_FAIL,
                        "%s failed: %s (JSON-RPC error %lld)", method,
                        *mb_cl_str(err, "message") ? mb_cl_str(err, "message") : "no message",
                        (long long)c);
    } else if (!json_is_object(res)) {
        rc = mb_cl_fail(m->cl, MB_CL_FAIL, "the %s result from %s is not an object", method,
                        m->url);
    } else {
        *result = json_incref((json_t *)res);
    }
    json_decref(reply);
    return rc;
}

int mb_cl_mcp_open(mb_cl *cl, const char *url, mb_cl_mcp **out)
{
    *out = NULL;
    mb_cl_mcp *m = mb_calloc(1, sizeof *m);
    m->cl = cl;
    m->url = mb_strdup(url);
    m->next_id = 1;
    json_t *params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", CLIENT_PROTOCOL,
                               "capabilities", "clientInfo", "name", "mcpbox-cli", "version",
                               "0.1.0");
    json_t *res = NULL;
    int rc = mb_cl_mcp_request(m, "initialize", params, &res);
    json_decref(params);
    if (!rc) {
        const char *v = mb_cl_str(res, "protocolVersion");
        if (!*v || strlen(v) >= sizeof m->version)
            rc = mb_cl_fail(cl, MB_CL_FAIL, "the server at %s gave no protocolVersion", url);
        else
            snprintf(m->version, sizeof m->version, "%s", v);
    }
    json_decref(res);
    if (!rc) {
        json_t *note = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
                                 "notifications/initialized");
        rc = post(m, note, -1, NULL);
        json_decref(note);
    }
    if (rc) {
        mb_cl_mcp_close(m);
        return rc;
    }
    *out = m;
    return MB_CL_OK;
}

static size_t discard(char *p, size_t size, size_t nmemb, void *ud)
{
    (void)p;
    (void)ud;
    return size * nmemb;
}

void mb_cl_mcp_close(mb_cl_mcp *m)
{
    if (!m) return;
    if (m->session[0]) {
        CURL *c = mb_cl_handle(m->cl);
        char sid[300];
        snprintf(sid, sizeof sid, "Mcp-Session-Id: %s", m->session);
        struct curl_slist *h = curl_slist_append(NULL, sid);
        curl_easy_setopt(c, CURLOPT_URL, m->url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
        curl_easy_perform(c);
        curl_slist_free_all(h);
    }
    free(m->url);
    free(m);
}
