/*
 * users.c - token sets: the operator's users file (Toolathlon's
 * configs/users_data.json shape) or one generated admin.
 */
#include "canvas/canvas.h"

#include <stdlib.h>
#include <string.h>

#define MAX_USERS 100000
#define MAX_FIELD 512

static const char *field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return NULL;
    const char *s = json_string_value(v);
    return *s && strlen(s) <= MAX_FIELD ? s : NULL;
}

static int add(mb_canvas_users *u, json_t *o, int admin, size_t *cap, mb_err *err)
{
    const char *email = field(o, "email");
    const char *token = field(o, "canvas_token");
    if (!token) token = field(o, "token");
    const char *name = field(o, "full_name");
    if (!name) name = field(o, "name");
    char *built = NULL;
    if (!name && field(o, "first_name"))
        name = built = mb_asprintf("%s %s", field(o, "first_name"),
                                   field(o, "last_name") ? field(o, "last_name") : "");
    if (!email || !token)
        return mb_err_set(err, MB_EINVAL, "canvas users file: user %zu has no email or canvas_token",
                          u->n + 1);
    if (u->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        u->v = mb_realloc(u->v, *cap * sizeof *u->v);
    }
    u->v[u->n++] = (mb_canvas_user){mb_strdup(name ? name : email), mb_strdup(email),
                                    mb_strdup(token), admin};
    free(built);
    return MB_OK;
}

int mb_canvas_users_load(const char *path, mb_canvas_users **out, mb_err *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) return mb_err_set(err, MB_EINVAL, "canvas users file %s: %s", path, je.text);
    json_t *users = json_object_get(doc, "users");
    json_t *admins = json_object_get(doc, "admins");
    if (!json_is_array(users) || json_array_size(users) > MAX_USERS) {
        json_decref(doc);
        return mb_err_set(err, MB_EINVAL, "canvas users file %s: no \"users\" array", path);
    }
    mb_canvas_users *u = mb_calloc(1, sizeof *u);
    size_t cap = 0, i;
    json_t *o;
    int rc = MB_OK;
    json_array_foreach(users, i, o) if (!rc) rc = add(u, o, 0, &cap, err);
    if (json_is_array(admins)) {
        json_array_foreach(admins, i, o) if (!rc) rc = add(u, o, 1, &cap, err);
    } else {
        for (int k = 1; k <= 3 && !rc; k++) {
            char name[64], email[64], token[64];
            snprintf(name, sizeof name, "MCP Canvas Admin %d", k);
            snprintf(email, sizeof email, "mcpcanvasadmin%d@mcp.com", k);
            snprintf(token, sizeof token, "mcpcanvasadmintoken%d", k);
            /* users_data.json lists them among its users: they become admins. */
            int found = 0;
            for (size_t j = 0; j < u->n; j++)
                if (!strcmp(u->v[j].email, email)) u->v[j].admin = found = 1;
            if (found) continue;
            json_t *a = json_pack("{s:s,s:s,s:s}", "name", name, "email", email, "canvas_token", token);
            rc = add(u, a, 1, &cap, err);
            json_decref(a);
        }
    }
    json_decref(doc);
    if (rc) {
        mb_canvas_users_free(u);
        return rc;
    }
    /* The set's identity: a hash over its tokens (what a claim holds). */
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < u->n; k++) h = h * 1099511628211ull ^ mb_hash_str(u->v[k].token);
    u->digest = mb_asprintf("%016llx", (unsigned long long)h);
    *out = u;
    return MB_OK;
}

mb_canvas_users *mb_canvas_users_generated(void)
{
    mb_canvas_users *u = mb_calloc(1, sizeof *u);
    u->v = mb_calloc(1, sizeof *u->v);
    unsigned char r[20];
    char hex[41];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, hex);
    u->v[0] = (mb_canvas_user){mb_strdup("Canvas Admin"), mb_strdup("admin@canvas.local"),
                               mb_asprintf("canvas_%s", hex), 1};
    u->n = 1;
    return u;
}

void mb_canvas_users_free(mb_canvas_users *u)
{
    if (!u) return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->v[i].name);
        free(u->v[i].email);
        free(u->v[i].token);
    }
    free(u->v);
    free(u->digest);
    free(u);
}
