/*
 * svc_mail.c - poste_email_toolathlon's row of the service hooks
 * (svchooks.c): initialize with Klavis's PosteEmailData, dump in the same
 * shape, and auth_data (where the host reaches IMAP and SMTP, and the
 * sandbox's mail domain). The mail itself is the mail layer's (src/mail).
 */
#include "api/api_int.h"
#include "mail/mail.h"

#include <stdlib.h>

static mb_mail *mail_of(mb_api *api, mb_err *err)
{
    mb_mail *m = mb_core_service_ctx(api->core, MB_MAIL_SERVER);
    if (!m) mb_err_set(err, MB_EBUSY, "this mcpbox runs without mail (serve --no-mail)");
    return m;
}

int mb_api__mail_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                            int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)call;
    (void)init_default; /* Klavis's default data is not public: nothing to add */
    mb_mail *m = mail_of(api, err);
    if (!m) return MB_EBUSY;
    int rc = mb_mail_initialize(m, t->rec.id, body, detail, err);
    if (rc) return rc;
    size_t users = json_object_size(json_object_get(body, "users")), emails = 0;
    const char *k;
    json_t *u;
    json_object_foreach(json_object_get(body, "users"), k, u)
        emails += json_array_size(json_object_get(u, "emails"));
    *message = mb_asprintf("Initialized %zu email%s for %zu user%s", emails,
                           emails == 1 ? "" : "s", users, users == 1 ? "" : "s");
    return MB_OK;
}

int mb_api__mail_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                      mb_err *err)
{
    (void)call;
    mb_mail *m = mail_of(api, err);
    if (!m) return MB_EBUSY;
    return mb_mail_dump(m, t->rec.id, data, err);
}

json_t *mb_api__mail_auth_data(mb_api *api, const mb_svc_target *t)
{
    mb_mail *m = mb_core_service_ctx(api->core, MB_MAIL_SERVER);
    char domain[256];
    if (!m || mb_mail_domain(m, t->rec.id, domain, sizeof domain, NULL) != MB_OK)
        return json_null();
    return json_pack("{s:s,s:i,s:i,s:s}", "ip", mb_mail_imap_host(m), "smtp_port",
                     mb_mail_smtp_port(m), "imap_port", mb_mail_imap_port(m), "domain", domain);
}
