/*
 * canvas.h - the face of the canvas layer: a Canvas LMS REST service over
 * SQLite, one database file per sandbox, so that reset and dump are file
 * operations.
 *
 *   core      mb_canvas_db + mb_canvas_handle: one REST request (method, path
 *             after /api/v1, query parameters, JSON body, bearer token) to a
 *             status, a JSON body and a Link header. Canvas's field names,
 *             error shapes, Link pagination (per_page/page, default 10),
 *             role-based visibility and ISO-8601 Z timestamps.
 *   service   mb_canvas_service: the node service `mcpbox serve` registers
 *             (core.h mb_core_service) for sandboxes whose servers include
 *             "canvas": the database at attach (users and tokens from the
 *             --canvas-users file, or one generated admin), the HTTP port for
 *             graders (the bearer token selects user and sandbox), and a unix
 *             socket per sandbox, bound into it, that its canvas MCP server
 *             speaks to (mb_canvas_client).
 *   klavis    CanvasData initialize and dump.
 *
 * Thread safety: an mb_canvas_db serialises its requests on its own mutex;
 * every mb_canvas_service function may be called from any thread.
 */
#ifndef MB_CANVAS_H
#define MB_CANVAS_H

#include "util/util.h"

#include <jansson.h>
#include <stdint.h>

/* ------------------------------------------------------------------ core */

typedef struct mb_canvas_db mb_canvas_db;

/* One user of a token set. */
typedef struct mb_canvas_user {
    char *name;
    char *email;
    char *token;
    int admin; /* an account admin of account 1 */
} mb_canvas_user;

typedef struct mb_canvas_users {
    mb_canvas_user *v;
    size_t n;
    char *digest; /* of the token set: the claim that makes it exclusive */
} mb_canvas_users;

/* Reads a Toolathlon users_data.json ({users: [{full_name|name|first_name,
 * last_name, email, canvas_token}], admins?: [...]}; without "admins" the
 * three Toolathlon admins mcpcanvasadmin{1..3} are added). */
int mb_canvas_users_load(const char *path, mb_canvas_users **out, mb_err *err);
/* One admin with a random token (sandboxes without a users file). */
mb_canvas_users *mb_canvas_users_generated(void);
void mb_canvas_users_free(mb_canvas_users *u);

/* Opens (creating the schema when new) the database at path. */
int mb_canvas_db_open(const char *path, mb_canvas_db **out, mb_err *err);
void mb_canvas_db_close(mb_canvas_db *db);
/* Gives back the page cache of an idle database (after acquire, initialize,
 * reset): a live sandbox that is not used keeps no pages. */
void mb_canvas_db_trim(mb_canvas_db *db);
/* Adds the root account and the users of the set (a fresh database). */
int mb_canvas_db_seed(mb_canvas_db *db, const mb_canvas_users *users, mb_err *err);
/* The user id of a token, or 0. */
int64_t mb_canvas_db_token_user(mb_canvas_db *db, const char *token);
/* The meta table: settings of the service kept with the data (the agent
 * user). _get answers NULL when unset (caller frees). */
int mb_canvas_db_meta_set(mb_canvas_db *db, const char *key, const char *value, mb_err *err);
char *mb_canvas_db_meta_get(mb_canvas_db *db, const char *key);
/* Writes a consistent copy of the database to path (VACUUM INTO). */
int mb_canvas_db_backup(mb_canvas_db *db, const char *path, mb_err *err);

typedef struct mb_canvas_param {
    char *key; /* decoded, e.g. "include[]" */
    char *val;
} mb_canvas_param;

typedef struct mb_canvas_req {
    const char *method;
    const char *path;              /* after /api/v1, e.g. "/courses/1" */
    const mb_canvas_param *params; /* query parameters, in order */
    size_t n_params;
    json_t *body;                  /* an object or NULL */
    const char *token;             /* bearer token; NULL = none */
    int64_t as_user;               /* > 0: act as this user without a token */
    const char *link_base;         /* Link URLs: link_base + path + query */
    const char *origin;            /* URLs in bodies: origin + path (e.g. "http://HOST:PORT",
                                      as the request reached the graders' port); NULL =
                                      http://localhost:10001, Toolathlon's Canvas */
} mb_canvas_req;

typedef struct mb_canvas_resp {
    int status;
    json_t *body;  /* owned */
    char *link;    /* Link header value or NULL; owned */
} mb_canvas_resp;

/* Answers one request; never fails (errors are Canvas error bodies). */
void mb_canvas_handle(mb_canvas_db *db, const mb_canvas_req *req, mb_canvas_resp *out);
void mb_canvas_resp_free(mb_canvas_resp *r);
/* The same from "path?query" (Link URLs on http://canvas.mcpbox/api/v1). */
void mb_canvas_handle_pq(mb_canvas_db *db, const char *method, const char *path_query,
                         json_t *body, const char *token, int64_t as_user, mb_canvas_resp *out);

/* A file's bytes for GET /files/:id/download (outside /api/v1, as Canvas
 * serves the `url` of a file or a submission's attachment). */
typedef struct mb_canvas_file {
    unsigned char *data;
    size_t len;
    char *content_type;
    char *filename;
} mb_canvas_file;
/* 0 and *out filled (free with mb_canvas_file_free) when user uid (0 =
 * none) may read file id, or verifier is the file's secret; else 404. A
 * reader: the owner, an account admin, a member of the course whose files
 * hold it, a teacher or TA of a course with a submission attaching it. */
int mb_canvas_file_download(mb_canvas_db *db, int64_t uid, int64_t id, const char *verifier,
                            mb_canvas_file *out);
void mb_canvas_file_free(mb_canvas_file *f);

/* Query string "a=1&b[]=2" to decoded parameters (at most 256). */
void mb_canvas_params_parse(const char *query, mb_canvas_param **out, size_t *n);
void mb_canvas_params_free(mb_canvas_param *p, size_t n);
/* A form body (a[b][]=c&...) as the JSON object Canvas's Rails would see. */
json_t *mb_canvas_form_to_json(const char *body, size_t len);

/* -------------------------------------------------------------- klavis */

/* CanvasData: {courses: [{name, course_code, published, assignments[],
 * quizzes[{..., questions[]}], enrollments[{user_email, role}],
 * announcements[]}]}, applied as the first admin. */
int mb_canvas_db_load_data(mb_canvas_db *db, json_t *data, json_t **detail, mb_err *err);
json_t *mb_canvas_db_dump_data(mb_canvas_db *db);

/* --------------------------------------------------------------- service */

/* Where the socket of a sandbox's service is, inside the sandbox: the
 * egress directory (src/egress), bound read-only at /mnt/egress for
 * sandboxes whose profile gives a server an "egress" list. */
#define MB_CANVAS_SOCK_NAME "canvas-api.sock"
#define MB_CANVAS_SOCK_ENV "MCPBOX_CANVAS_SOCKET"

typedef struct mb_canvas_service mb_canvas_service;

typedef struct mb_canvas_opts {
    const char *data_dir;   /* the daemon's data dir: DIR/canvas/ID.db, DIR/egress/ID/ */
    const char *listen;     /* ADDR:PORT of the graders' port; NULL = 127.0.0.1:10001,
                               "off" = none */
    const char *users_file; /* Toolathlon users_data.json; NULL = a generated admin */
    const char *users_for;  /* the benchmark the users file is for; NULL = every sandbox */
    const char *https_listen; /* ADDR:PORT of the same port over HTTPS; NULL = none */
    const char *tls_pem;    /* with https_listen: a PEM file, certificate and key */
    void *store;            /* mb_store * for the token-set claims */
} mb_canvas_opts;

int mb_canvas_service_new(const mb_canvas_opts *o, mb_canvas_service **out, mb_err *err);
void mb_canvas_service_free(mb_canvas_service *s);
/* The port the graders' HTTP server is bound to (0 = none). */
unsigned mb_canvas_service_port(mb_canvas_service *s);
/* The HTTPS port (0 = none). */
unsigned mb_canvas_service_https_port(mb_canvas_service *s);
int mb_canvas_attach(mb_canvas_service *s, const char *id, const char *benchmark,
                     const char *agent_email, mb_err *err);
void mb_canvas_detach(mb_canvas_service *s, const char *id);
int mb_canvas_reset(mb_canvas_service *s, const char *id, mb_err *err);
/* Klavis initialize (data NULL or {} = the state after attach) and dump. */
int mb_canvas_initialize(mb_canvas_service *s, const char *id, json_t *data, json_t **detail,
                         mb_err *err);
int mb_canvas_dump(mb_canvas_service *s, const char *id, json_t **out, mb_err *err);
/* {api_token, domain, base_url, user_email} of the agent user. */
json_t *mb_canvas_auth_data(mb_canvas_service *s, const char *id);
/* Registers the service with the core (canvas/hook.c). */
struct mb_core;
int mb_canvas_register(struct mb_core *core, mb_canvas_service *s, mb_err *err);
/* The service registered with a core, or NULL. */
mb_canvas_service *mb_canvas_of(struct mb_core *core);

/* ---------------------------------------------------------------- client */

/* How the canvas MCP server reaches its Canvas: the sandbox's socket, or a
 * database file opened in-process (tests, standalone use). */
typedef struct mb_canvas_client mb_canvas_client;
int mb_canvas_client_socket(const char *path, const char *token, mb_canvas_client **out,
                            mb_err *err);
int mb_canvas_client_db(const char *db_path, const char *token, mb_canvas_client **out,
                        mb_err *err);
void mb_canvas_client_free(mb_canvas_client *c);
/* One request: path with an optional query ("/courses?include[]=x"). */
int mb_canvas_client_call(mb_canvas_client *c, const char *method, const char *path_query,
                          json_t *body, mb_canvas_resp *out, mb_err *err);

#endif /* MB_CANVAS_H */
