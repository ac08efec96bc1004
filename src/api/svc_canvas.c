/*
 * svc_canvas.c - Klavis's initialize, dump and auth_data for canvas: the
 * sandbox's Canvas (src/canvas). initialize loads CanvasData on top of the
 * users the sandbox was given (replacing what an earlier initialize
 * loaded); dump reads courses (assignments, quizzes with questions,
 * enrollments, announcements, submissions) and conversations back;
 * auth_data is the agent user's token and the REST port's address.
 */
#include "api/api_int.h"
#include "canvas/canvas.h"

int mb_api__canvas_initialize(mb_api *api, mb_call *call, const mb_svc_target *t, json_t *body,
                              int init_default, char **message, json_t **detail, mb_err *err)
{
    (void)call;
    (void)init_default; /* the default data is the users every Canvas starts with */
    mb_canvas_service *s = mb_canvas_of(api->core);
    if (!s) return mb_err_set(err, MB_ECONFLICT, "this mcpbox runs no Canvas service");
    if (body && !json_is_null(body) && !json_is_object(body)) {
        *detail = json_pack("[{s:s,s:[s],s:s,s:O}]", "type", "model_attributes_type", "loc", "body",
                            "msg", "Input should be a valid dictionary or object to extract fields from",
                            "input", body);
        return MB_EINVAL;
    }
    int rc = mb_canvas_initialize(s, t->rec.id, body, detail, err);
    if (!rc) *message = mb_strdup("Canvas sandbox initialized");
    return rc;
}

int mb_api__canvas_dump(mb_api *api, mb_call *call, const mb_svc_target *t, json_t **data,
                        mb_err *err)
{
    (void)call;
    mb_canvas_service *s = mb_canvas_of(api->core);
    if (!s) return mb_err_set(err, MB_ECONFLICT, "this mcpbox runs no Canvas service");
    return mb_canvas_dump(s, t->rec.id, data, err);
}

json_t *mb_api__canvas_auth_data(mb_api *api, const mb_svc_target *t)
{
    mb_canvas_service *s = mb_canvas_of(api->core);
    return s ? mb_canvas_auth_data(s, t->rec.id) : json_null();
}
