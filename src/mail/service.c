/*
 * service.c - the mail layer as a node service of the core: attach at
 * acquire (the domain of test_account_email, or a free mcpN.com), detach at
 * release, and the socket directory bound at MB_MAIL_DIR_INSIDE in every
 * sandbox whose profile offers poste_email_toolathlon.
 */
#include "mail/mail_int.h"
#include "core/core.h"

static int svc_attach(void *ctx, const mb_sandbox_rec *rec, const mb_acquire_req *req,
                      mb_err *err)
{
    (void)req;
    return mb_mail_attach(ctx, rec->id, rec->test_account_email, err);
}

static void svc_detach(void *ctx, const mb_sandbox_rec *rec) { mb_mail_detach(ctx, rec->id); }

static int svc_reset(void *ctx, const mb_sandbox_rec *rec, mb_err *err)
{
    return mb_mail_reset(ctx, rec->id, err);
}

static char *svc_bind_dir(void *ctx, const char *id) { return mb_mail_sandbox_dir(ctx, id); }

void mb_mail__assert_locked(mb_mail *m, const char *sandbox_id)
{
    (void)sandbox_id;
    mb_assert(!m->core || mb_core_lock_held(m->core, sandbox_id));
}

int mb_mail_register(mb_mail *m, struct mb_core *core, mb_err *err)
{
    m->core = core;
    mb_core_service s = {
        .server = MB_MAIL_SERVER,
        .ctx = m,
        .attach = svc_attach,
        .detach = svc_detach,
        .reset = svc_reset,
        .bind_inside = MB_MAIL_DIR_INSIDE,
        .bind_dir = svc_bind_dir,
    };
    return mb_core_service_add(core, &s, err);
}

int mb_mail_start_for_serve(struct mb_core *core, const struct mb_config *cfg, mb_mail **out,
                            mb_err *err)
{
    mb_mail_opts o = {
        .data_dir = cfg->data_dir,
        .imap_listen = cfg->mail_imap,
        .smtp_listen = cfg->mail_smtp,
        .users_file = cfg->mail_users,
        .store = mb_core_store(core),
    };
    mb_mail *m = NULL;
    int rc = mb_mail_new(&o, &m, err);
    if (!rc) rc = mb_mail_register(m, core, err);
    if (!rc) mb_mail_reconcile(m);
    if (rc) {
        mb_mail_free(m);
        return rc;
    }
    *out = m;
    return MB_OK;
}
