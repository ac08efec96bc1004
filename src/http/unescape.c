/*
 * unescape.c - how a request target is decoded, and what it may hold.
 *
 * libmicrohttpd percent-decodes the path and every query argument in place
 * and hands them over as C strings, so a %00 would end them early:
 * "/local-sandbox/ID%00anything" would read as "/local-sandbox/ID" and act on
 * ID. mb_http_unescape decodes %00 as the byte 0xFF instead, which is never
 * valid UTF-8: no id, route or name matches it, so such a request is refused
 * rather than read as a shorter one. Every MHD daemon of mcpbox passes it as
 * MHD_OPTION_UNESCAPE_CALLBACK (the HTTP layer here, so the REST API, the MCP
 * gateway and Canvas; and the Google Cloud facade).
 *
 * A path that is not UTF-8 reaches the application, which answers it as the
 * upstream services do (a 404 naming the repaired path); a query argument
 * that is not UTF-8 (%00 included) is refused by the layer with 400 before
 * any handler reads it (mb_http__target_error).
 */
#include "http/http_int.h"

#include <string.h>

size_t mb_http_unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    for (char *p = strchr(s, '%'); p; p = strchr(p + 1, '%'))
        if (p[1] == '0' && p[2] == '0') p[1] = p[2] = 'F';
    return MHD_http_unescape(s);
}

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    int *bad = cls;
    (void)kind;
    if ((key && !mb_utf8_valid(key, strlen(key))) ||
        (value && !mb_utf8_valid(value, strlen(value)))) {
        *bad = 1;
        return MHD_NO;
    }
    return MHD_YES;
}

const char *mb_http__target_error(struct MHD_Connection *conn)
{
    int bad = 0;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, check_arg, &bad);
    return bad ? "Bad request: a query argument is not valid UTF-8 (or holds %00)" : NULL;
}
