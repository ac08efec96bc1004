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

/* initialize and dump run under the sandbox's lock (mb_core_with_lock),
 * so that neither interleaves with a release or reset of the sandbox. */
typedef struct mail_op {
    mb_mail *m;
    json_t *body;
    json_t **detail, **data;
} mail_op;

static int initialize_locked(void *arg, const mb_sandbox_rec *rec, mb_err *err)
{
    mail_op *op = arg;
    return mb_mail_initialize(op->m, rec->id, op->body, op->detail, err);
}

static int dump_locked(void *arg, const mb_sandbox_rec *rec, mb_err *err)
{
    mail_op *op = arg;
    return mb_mail_dump(op->m, rec->id, op->data, err);
}

int mb_api__mail_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                            int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)init_default; /* Klavis's default data is not public: nothing to add */
    mb_mail *m = mail_of(api, err);
    if (!m) return MB_EBUSY;
    mail_op op = {.m = m, .body = body, .detail = detail};
    int rc = mb_core_with_lock(api->core, call->key.owner, t->rec.id, initialize_locked, &op,
                               err);
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
    mb_mail *m = mail_of(api, err);
    if (!m) return MB_EBUSY;
    mail_op op = {.m = m, .data = data};
    return mb_core_with_lock(api->core, call->key.owner, t->rec.id, dump_locked, &op, err);
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
