/*
 * dashboard.c - GET /: the web dashboard, one self-contained page (HTML, CSS
 * and JavaScript, no external assets) embedded in the binary. The page logs
 * in with an API key kept in the browser's sessionStorage and drives the
 * REST API like any client. Its source is src/api/dashboard/index.html;
 * scripts/embed-dashboard turns it into dashboard_page.h.
 */
#include "api/api_int.h"

#include <string.h>

#include "api/dashboard_page.h"

void mb_api__dashboard(mb_api *api, mb_call *call)
{
    static const char *const headers[] = {
        "Cache-Control", "no-store",
        /* Everything the page needs is in it: no other origin, no framing. */
        "Content-Security-Policy",
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'",
        "X-Content-Type-Options", "nosniff",
        "Referrer-Policy", "no-referrer",
        NULL};
    mb_http_respond_bytes(call->req, 200, "text/html; charset=utf-8", mb_dashboard_page,
                          sizeof mb_dashboard_page - 1, headers);
}
