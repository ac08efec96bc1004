/*
 * hook.c - the Canvas service as a node service of the core (core.h
 * mb_core_service): attach at acquire, detach at release, reset at reset,
 * for sandboxes whose servers include "canvas".
 */
#include "canvas/svc_int.h"
#include "core/core.h"

static int attach(void *ctx, const mb_sandbox_rec *rec, const mb_acquire_req *req, mb_err *err)
{
    return mb_canvas_attach(ctx, rec->id, req->benchmark, req->test_account_email, err);
}

static void detach(void *ctx, const mb_sandbox_rec *rec) { mb_canvas_detach(ctx, rec->id); }

static int reset(void *ctx, const mb_sandbox_rec *rec, mb_err *err)
{
    return mb_canvas_reset(ctx, rec->id, err);
}

int mb_canvas_register(mb_core *core, mb_canvas_service *s, mb_err *err)
{
    mb_core_service svc = {.server = "canvas", .ctx = s, .attach = attach, .detach = detach,
                           .reset = reset};
    return mb_core_service_add(core, &svc, err);
}

mb_canvas_service *mb_canvas_of(mb_core *core)
{
    return mb_core_service_ctx(core, "canvas");
}
