/*
 * result.c - what a tool handler builds: content blocks, structuredContent,
 * isError, and the "throw" of mb_mcp_fail(); plus small argument getters.
 *
 * Text is always repaired to valid UTF-8 (Node decodes files with U+FFFD
 * replacement, and jansson refuses invalid UTF-8), so handlers may pass raw
 * bytes.
 */
#include "mcp/mcp_int.h"

#include <stdlib.h>
#include <string.h>

void mb_mcp__result_init(mb_mcp_result *res)
{
    memset(res, 0, sizeof *res);
    res->content = json_array();
}

void mb_mcp__result_dispose(mb_mcp_result *res)
{
    json_decref(res->content);
    json_decref(res->structured);
    free(res->msg);
    memset(res, 0, sizeof *res);
}

static json_t *text_value(const char *text, size_t len)
{
    if (mb_utf8_valid(text, len)) return json_stringn(text, len);
    size_t n;
    char *fixed = mb_utf8_repair(text, len, &n);
    json_t *j = json_stringn(fixed, n);
    free(fixed);
    return j;
}

void mb_mcp_text_n(mb_mcp_result *res, const char *text, size_t len)
{
    json_t *b = json_object();
    json_object_set_new(b, "type", json_string("text"));
    json_object_set_new(b, "text", text_value(text, len));
    json_array_append_new(res->content, b);
}

void mb_mcp_text(mb_mcp_result *res, const char *text) { mb_mcp_text_n(res, text, strlen(text)); }

void mb_mcp_textf(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    mb_mcp_text_n(res, b.data ? b.data : "", b.len);
    mb_buf_free(&b);
}

static void media(mb_mcp_result *res, const char *type, const char *base64, const char *mime)
{
    json_array_append_new(res->content, json_pack("{s:s, s:s, s:s}", "type", type, "data", base64,
                                                  "mimeType", mime));
}

void mb_mcp_image(mb_mcp_result *res, const char *base64, const char *mime)
{
    media(res, "image", base64, mime);
}

void mb_mcp_audio(mb_mcp_result *res, const char *base64, const char *mime)
{
    media(res, "audio", base64, mime);
}

void mb_mcp_content(mb_mcp_result *res, json_t *block) { json_array_append_new(res->content, block); }

void mb_mcp_structured(mb_mcp_result *res, json_t *obj)
{
    json_decref(res->structured);
    res->structured = obj;
}

void mb_mcp_set_is_error(mb_mcp_result *res, int is_error) { res->is_error = is_error != 0; }

static int fail_with(mb_mcp_result *res, int state, int code, char *msg)
{
    json_array_clear(res->content);
    json_decref(res->structured);
    res->structured = NULL;
    free(res->msg);
    size_t n;
    res->msg = mb_utf8_repair(msg, strlen(msg), &n);
    free(msg);
    res->state = state;
    res->rpc_code = code;
    return MB_MCP_FAILED;
}

int mb_mcp_fail(mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return fail_with(res, MB_RES_FAIL, 0, mb_buf_steal(&b));
}

int mb_mcp_fail_str(mb_mcp_result *res, const char *msg)
{
    return fail_with(res, MB_RES_FAIL, 0, mb_strdup(msg));
}

int mb_mcp_rpc_error(mb_mcp_result *res, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return fail_with(res, MB_RES_RPC, code, mb_buf_steal(&b));
}

/* ------------------------------------------------------------ arguments */

const char *mb_mcp_arg_str(const json_t *args, const char *key, const char *def)
{
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

double mb_mcp_arg_num(const json_t *args, const char *key, double def)
{
    json_t *v = json_object_get(args, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

int mb_mcp_arg_bool(const json_t *args, const char *key, int def)
{
    json_t *v = json_object_get(args, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}
