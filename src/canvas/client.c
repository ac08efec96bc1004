/*
 * client.c - how the canvas MCP server reaches its Canvas: frames over the
 * sandbox's socket (one connection, reopened when it drops), or a database
 * file opened in this process. Both answer through mb_canvas_handle.
 */
#include "canvas/svc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct mb_canvas_client {
    char *sock_path;
    int fd;
    mb_canvas_db *db;
    char *token;
    int64_t as_user;
};

static int dial(mb_canvas_client *c, mb_err *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", c->sock_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return mb_err_sys(err, errno, "socket");
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return mb_err_sys(err, e, "cannot reach Canvas at %s", c->sock_path);
    }
    c->fd = fd;
    return MB_OK;
}

int mb_canvas_client_socket(const char *path, const char *token, mb_canvas_client **out,
                            mb_err *err)
{
    if (!path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return mb_err_set(err, MB_EINVAL, "bad Canvas socket path");
    mb_canvas_client *c = mb_calloc(1, sizeof *c);
    c->sock_path = mb_strdup(path);
    c->fd = -1;
    c->token = token && *token ? mb_strdup(token) : NULL;
    *out = c;
    return MB_OK;
}

int mb_canvas_client_db(const char *db_path, const char *token, mb_canvas_client **out,
                        mb_err *err)
{
    mb_canvas_client *c = mb_calloc(1, sizeof *c);
    c->fd = -1;
    int rc = mb_canvas_db_open(db_path, &c->db, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->token = token && *token ? mb_strdup(token) : NULL;
    if (!c->token) c->as_user = mb_canvas__admin_user(c->db);
    *out = c;
    return MB_OK;
}

void mb_canvas_client_free(mb_canvas_client *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    mb_canvas_db_close(c->db);
    free(c->sock_path);
    free(c->token);
    free(c);
}

static int via_socket(mb_canvas_client *c, json_t *rq, mb_canvas_resp *out, mb_err *err)
{
    for (int tries = 0; tries < 2; tries++) {
        if (c->fd < 0) {
            int rc = dial(c, err);
            if (rc) return rc;
        }
        json_t *ans = NULL;
        if (!mb_canvas__frame_write(c->fd, rq)) ans = mb_canvas__frame_read(c->fd);
        if (json_is_object(ans)) {
            out->status = (int)json_integer_value(json_object_get(ans, "status"));
            out->body = json_incref(json_object_get(ans, "body"));
            if (!out->body) out->body = json_null();
            const char *link = json_string_value(json_object_get(ans, "link"));
            out->link = link ? mb_strdup(link) : NULL;
            json_decref(ans);
            return MB_OK;
        }
        json_decref(ans);
        close(c->fd);
        c->fd = -1;
    }
    return mb_err_set(err, MB_EIO, "the Canvas service closed the connection");
}

int mb_canvas_client_call(mb_canvas_client *c, const char *method, const char *path_query,
                          json_t *body, mb_canvas_resp *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    if (c->db) {
        mb_canvas_handle_pq(c->db, method, path_query, body, c->token, c->as_user, out);
        return MB_OK;
    }
    json_t *rq = json_pack("{s:s,s:s,s:O?,s:s?}", "method", method, "path", path_query, "body",
                           body, "token", c->token);
    int rc = via_socket(c, rq, out, err);
    json_decref(rq);
    return rc;
}
