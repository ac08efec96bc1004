/*
 * http_int.h - what the files of the HTTP layer share and nothing outside
 * the layer includes.
 */
#ifndef MB_HTTP_INT_H
#define MB_HTTP_INT_H

#include "http/http.h"

/* The reason a request's framing headers are refused (RFC 9112), or NULL. */
const char *mb_http__framing_error(struct MHD_Connection *conn);

/* Queues a 400 {"detail": msg} answer that closes the connection. */
void mb_http__respond_close(mb_http_req *req, const char *msg);

#endif /* MB_HTTP_INT_H */
