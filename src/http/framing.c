/*
 * framing.c - message framing rules of RFC 9112 that libmicrohttpd 0.9.75
 * leaves to us: a request with both Content-Length and Transfer-Encoding, a
 * repeated Content-Length, or more than one Host is refused with 400 and the
 * connection closed (sections 6.1, 6.3 and 3.2), so that no proxy in front
 * of mcpbox and mcpbox itself can disagree about where a request ends.
 */
#include "http/http_int.h"

#include <string.h>
#include <strings.h>

typedef struct framing_count {
    unsigned content_length, transfer_encoding, host;
} framing_count;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    framing_count *c = cls;
    (void)kind, (void)value;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) c->content_length++;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) c->transfer_encoding++;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_HOST)) c->host++;
    return MHD_YES;
}

const char *mb_http__framing_error(struct MHD_Connection *conn)
{
    framing_count c = {0, 0, 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &c);
    if (c.content_length && c.transfer_encoding)
        return "Bad request: Content-Length and Transfer-Encoding together";
    if (c.content_length > 1) return "Bad request: more than one Content-Length header";
    if (c.host > 1) return "Bad request: more than one Host header";
    return NULL;
}
