/*
 * respond.c - request accessors and the answers handlers queue: JSON bodies,
 * {"detail": ...} errors, files.
 */
#include "http/http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *mb_http_header(mb_http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *mb_http_query(mb_http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* The one way an answer leaves. While the request's body is still arriving
 * the answer is held and the body drained first (http.h), except when the
 * client waits for 100 Continue or declared more than the drain bound: then
 * it goes at once and MHD closes the connection after it without reading the
 * body. An answer mid-body is always held: MHD would otherwise read the rest
 * of the body, however long, before sending it. */
static enum MHD_Result queue_now_or_held(mb_http_req *req, unsigned status,
                                         struct MHD_Response *resp)
{
    int pending = req->has_body && req->stage < 2;
    int too_long = req->declared_len != UINT64_MAX &&
                   req->declared_len - req->received > req->drain_limit;
    if (pending && (req->stage == 1 || (!req->expects_continue && !too_long))) {
        req->held = resp;
        req->held_status = status;
        mb_http__phase(req->srv, req->hc, MB_HTTP_DRAIN);
        return MHD_YES;
    }
    enum MHD_Result ret = MHD_queue_response(req->conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result mb_http_queue_response(struct MHD_Connection *conn, unsigned status,
                                       struct MHD_Response *resp)
{
    mb_http_conn *hc = mb_http__conn(conn);
    if (!hc || !hc->req) {
        enum MHD_Result ret = MHD_queue_response(conn, status, resp);
        MHD_destroy_response(resp);
        return ret;
    }
    if (hc->req->held) {
        mb_warn("http: second response for %s %s dropped", hc->req->method, hc->req->path);
        MHD_destroy_response(resp);
        return MHD_YES;
    }
    hc->req->responded = 1;
    if (hc->req->request_id[0])
        MHD_add_response_header(resp, "X-Request-Id", hc->req->request_id);
    return queue_now_or_held(hc->req, status, resp);
}

static void queue(mb_http_req *req, unsigned status, struct MHD_Response *resp)
{
    if (req->responded) {
        mb_warn("http: second response for %s %s dropped", req->method, req->path);
        MHD_destroy_response(resp);
        return;
    }
    req->responded = 1;
    if (req->request_id[0]) MHD_add_response_header(resp, "X-Request-Id", req->request_id);
    queue_now_or_held(req, status, resp);
    mb_debug("http: %s %s -> %u (%lld ms)", req->method, req->path, status,
             (long long)(mb_mono_ms() - req->started_ms));
}

/* The body of a {"detail": msg} answer; msg must be valid UTF-8 (it is
 * repaired here all the same, so no client byte can make this fail). */
static char *detail_text(const char *msg)
{
    char *fixed = mb_utf8_valid(msg, strlen(msg)) ? NULL : mb_utf8_repair(msg, strlen(msg), NULL);
    json_t *body = json_pack("{s:s}", "detail", fixed ? fixed : msg);
    free(fixed);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    return text ? text : mb_strdup("{\"detail\":\"Internal error\"}");
}

static struct MHD_Response *json_text_response(char *text)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return resp;
}

void mb_http__respond_close(mb_http_req *req, const char *msg)
{
    struct MHD_Response *resp = json_text_response(detail_text(msg));
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    queue(req, 400, resp);
}

static void queue_json_text(mb_http_req *req, unsigned status, char *text)
{
    struct MHD_Response *resp = json_text_response(text);
    if (status == 401) MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 429) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", req->retry_after_s ? req->retry_after_s : 1);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    queue(req, status, resp);
}

void mb_http_respond_json(mb_http_req *req, unsigned status, json_t *body)
{
    /* A body that could not be built (json_pack refuses invalid UTF-8 and
     * returns NULL) is an error answer, never a crash. */
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(body);
    if (!text) {
        mb_warn("http: %s %s: the answer could not be encoded", req->method, req->path);
        queue_json_text(req, 500, detail_text("Internal error: the answer could not be encoded"));
        return;
    }
    queue_json_text(req, status, text);
}

void mb_http_respond_detail(mb_http_req *req, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    mb_text_vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    queue_json_text(req, status, detail_text(msg));
}

unsigned mb_http_status_for(int code)
{
    switch (code) {
    case MB_OK: return 200;
    case MB_EINVAL: return 400;
    case MB_ENOTFOUND: return 404;
    case MB_ECONFLICT: return 409;
    case MB_ETOOBIG: return 413;
    case MB_EDENIED: return 403;
    case MB_EEXPIRED: return 403;
    case MB_EUNAUTH: return 401;
    case MB_EBUSY: return 503;
    case MB_ETIMEOUT: return 504;
    case MB_ENOSPACE: return 507;
    case MB_ELIMIT: return 429;
    default: return 500;
    }
}

void mb_http_respond_err(mb_http_req *req, const mb_err *err)
{
    unsigned status = mb_http_status_for(err->code);
    const char *msg = err->msg[0] ? err->msg : mb_code_name(err->code);
    if (status >= 500) mb_warn("%s %s: %s", req->method, req->path, msg);
    queue_json_text(req, status, detail_text(msg));
}

void mb_http_respond_fd(mb_http_req *req, unsigned status, int fd, uint64_t size,
                        const char *content_type, const char *filename)
{
    struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);
    if (!resp) {
        close(fd);
        mb_http_respond_detail(req, 500, "Internal error: cannot send the file");
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (filename) {
        char disp[300];
        snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", filename);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
    }
    queue(req, status, resp);
}

void mb_http_respond_empty(mb_http_req *req, unsigned status)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    queue(req, status, resp);
}

void mb_http_respond_bytes(mb_http_req *req, unsigned status, const char *content_type,
                           const void *data, size_t len, const char *const *headers)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
        MHD_add_response_header(resp, headers[i], headers[i + 1]);
    queue(req, status, resp);
}
