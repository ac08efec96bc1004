/*
 * sandboxes.c - `mcpbox acquire|ls|get|rm|reset`: a sandbox's life cycle
 * from a shell, over POST/GET/DELETE /local-sandbox.
 */
#include "cli/cli.h"
#include "cli/client/client.h"

#include <stdlib.h>
#include <string.h>

/* "ready", "starting", "error" (or the status) of a server item. */
static const char *server_state(const json_t *srv)
{
    const char *status = mb_cl_str(srv, "status");
    const json_t *ready = json_object_get(json_object_get(srv, "metadata"), "ready");
    if (!strcmp(status, "error")) return "error";
    if (json_is_true(ready)) return "ready";
    if (!strcmp(status, "occupied")) return "starting";
    return *status ? status : "?";
}

void mb_cl_print_sandbox(const json_t *info)
{
    const json_t *bm = json_object_get(info, "benchmark");
    mb_cl_table t = {0};
    const char *head[] = {"id:", mb_cl_str(info, "local_sandbox_id")};
    mb_cl_table_row(&t, 2, head);
    const char *st[] = {"status:", mb_cl_str(info, "status")};
    mb_cl_table_row(&t, 2, st);
    const char *b[] = {"benchmark:", json_is_string(bm) ? json_string_value(bm) : "-"};
    mb_cl_table_row(&t, 2, b);
    const char *created = mb_cl_str(info, "created_at");
    if (*created) {
        const char *c[] = {"created:", created};
        mb_cl_table_row(&t, 2, c);
    }
    mb_cl_table_print(&t, stdout);
    const json_t *servers = json_object_get(info, "servers");
    if (!json_is_array(servers) || !json_array_size(servers)) return;
    putchar('\n');
    const char *cols[] = {"SERVER", "STATE", "MCP URL"};
    mb_cl_table_row(&t, 3, cols);
    size_t i;
    const json_t *srv;
    mb_buf why = {0};
    json_array_foreach(servers, i, srv) {
        const char *url = mb_cl_str(srv, "mcp_server_url");
        const char *row[] = {mb_cl_str(srv, "server_name"), server_state(srv), *url ? url : "-"};
        mb_cl_table_row(&t, 3, row);
        const char *err = mb_cl_str(json_object_get(srv, "metadata"), "error");
        if (*err) mb_buf_printf(&why, "%s: %s\n", mb_cl_str(srv, "server_name"), err);
    }
    mb_cl_table_print(&t, stdout);
    if (why.len) {
        char *clean = mb_cl_clean(why.data, 1);
        printf("\n%s", clean);
        free(clean);
    }
    mb_buf_free(&why);
}

/* ------------------------------------------------------------- acquire */

typedef struct acquire_opts {
    const char *benchmark;
    const char *ttl;
    const char *email;
    int quiet;
} acquire_opts;

static int acquire_opt(void *ctx, int c, const char *arg)
{
    acquire_opts *o = ctx;
    if (c == 'b') o->benchmark = arg;
    else if (c == 't') o->ttl = arg;
    else if (c == 'e') o->email = arg;
    else if (c == 'q') o->quiet = 1;
    else return -1;
    return 0;
}

int mb_cmd_acquire(int argc, char **argv)
{
    static const char usage[] =
        "usage: mcpbox acquire [--benchmark B] [--ttl SECONDS] [-q] SERVER...|ALL\n"
        "  --benchmark B   MCP_Atlas, Toolathlon or MCP_Mark (servers set up as it expects)\n"
        "  --ttl SECONDS   released after this long (60..86400; default: the daemon's, 7200)\n"
        "  --email ADDR    test_account_email\n"
        "  -q, --quiet     print only the new sandbox's id\n";
    static const struct option extra[] = {
        {"benchmark", required_argument, NULL, 'b'},
        {"ttl", required_argument, NULL, 't'},
        {"email", required_argument, NULL, 'e'},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    static const mb_cl_cmd cmd = {"acquire", usage, "q", extra, acquire_opt, 1, -1,
                                  "server names (e.g. filesystem git) or ALL"};
    mb_cl cl;
    acquire_opts o = {0};
    int rc = mb_cl_start(&cl, &cmd, argc, argv, &o);
    if (rc >= 0) goto out;
    rc = MB_CL_OK;
    json_t *body = json_object();
    if (argc - optind == 1 && !strcmp(argv[optind], "ALL")) {
        json_object_set_new(body, "server_names", json_string("ALL"));
    } else {
        json_t *names = json_array();
        for (int i = optind; i < argc; i++) {
            if (!mb_cl_valid_name(argv[i])) {
                rc = mb_cl_fail(&cl, MB_CL_USAGE, "'%s' is not a server name", argv[i]);
                break;
            }
            json_array_append_new(names, json_string(argv[i]));
        }
        json_object_set_new(body, "server_names", names);
    }
    if (!rc && o.benchmark) json_object_set_new(body, "benchmark", json_string(o.benchmark));
    if (!rc && o.email) json_object_set_new(body, "test_account_email", json_string(o.email));
    if (!rc && o.ttl) {
        char *end;
        long long ttl = strtoll(o.ttl, &end, 10);
        if (!*o.ttl || *end) rc = mb_cl_fail(&cl, MB_CL_USAGE, "--ttl wants seconds, not '%s'", o.ttl);
        else json_object_set_new(body, "ttl_seconds", json_integer(ttl));
    }
    if (!json_is_string(json_object_get(body, "benchmark")) && o.benchmark)
        rc = mb_cl_fail(&cl, MB_CL_USAGE, "--benchmark must be UTF-8 text");
    json_t *res = NULL;
    if (!rc) rc = mb_cl_api(&cl, "POST", "/local-sandbox", body, NULL, &res);
    json_decref(body);
    if (!rc) {
        if (cl.json) mb_cl_print_json(res);
        else if (o.quiet) {
            char *id = mb_cl_clean(mb_cl_str(res, "local_sandbox_id"), 0);
            printf("%s\n", id);
            free(id);
        } else mb_cl_print_sandbox(res);
    }
    json_decref(res);
out:
    mb_cl_free(&cl);
    return rc;
}

/* ------------------------------------------------------------------ ls */

int mb_cmd_ls(int argc, char **argv)
{
    static const char usage[] = "usage: mcpbox ls [--json]\n"
                                "Lists the sandboxes of the key's owner.\n";
    static const mb_cl_cmd cmd = {"ls", usage, NULL, NULL, NULL, 0, 0,
                                  "no operands (`mcpbox get ID` shows one sandbox)"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    json_t *res = NULL;
    rc = mb_cl_api(&cl, "GET", "/local-sandbox", NULL, NULL, &res);
    if (!rc) {
        const json_t *arr = json_object_get(res, "local_sandboxes");
        if (cl.json) {
            mb_cl_print_json(res);
        } else if (!json_array_size(arr)) {
            printf("no sandboxes (make one with `mcpbox acquire SERVER...`)\n");
        } else {
            mb_cl_table t = {0};
            const char *cols[] = {"ID", "STATUS", "BENCHMARK", "CREATED", "SERVERS"};
            mb_cl_table_row(&t, 5, cols);
            size_t i;
            const json_t *sb;
            json_array_foreach(arr, i, sb) {
                mb_buf servers = {0};
                size_t j;
                const json_t *srv;
                json_array_foreach(json_object_get(sb, "servers"), j, srv) {
                    const char *state = server_state(srv);
                    if (j) mb_buf_putc(&servers, ' ');
                    mb_buf_puts(&servers, mb_cl_str(srv, "server_name"));
                    if (strcmp(state, "ready")) mb_buf_printf(&servers, "(%.20s)", state);
                }
                const json_t *bm = json_object_get(sb, "benchmark");
                char created[20];
                snprintf(created, sizeof created, "%.19s", mb_cl_str(sb, "created_at"));
                if (strlen(created) == 19) created[10] = ' ';
                const char *row[] = {mb_cl_str(sb, "local_sandbox_id"), mb_cl_str(sb, "status"),
                                     json_is_string(bm) ? json_string_value(bm) : "-", created,
                                     servers.data ? servers.data : "-"};
                mb_cl_table_row(&t, 5, row);
                mb_buf_free(&servers);
            }
            mb_cl_table_print(&t, stdout);
        }
    }
    json_decref(res);
out:
    mb_cl_free(&cl);
    return rc;
}

/* ----------------------------------------------------------------- get */

int mb_cmd_get(int argc, char **argv)
{
    static const char usage[] = "usage: mcpbox get ID [--json]\n"
                                "Shows one sandbox and its servers (ID: the id or its start).\n";
    static const mb_cl_cmd cmd = {"get", usage, NULL, NULL, NULL, 1, 1, "one sandbox id"};
    mb_cl cl;
    int rc = mb_cl_start(&cl, &cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    char *id = NULL;
    rc = mb_cl_resolve_id(&cl, argv[optind], &id);
    json_t *res = NULL;
    if (!rc) {
        char *path = mb_asprintf("/local-sandbox/%s", id);
        rc = mb_cl_api(&cl, "GET", path, NULL, id, &res);
        free(path);
    }
    if (!rc) {
        if (cl.json) mb_cl_print_json(res);
        else mb_cl_print_sandbox(res);
    }
    json_decref(res);
    free(id);
out:
    mb_cl_free(&cl);
    return rc;
}

int mb_cl_server_url(mb_cl *cl, const char *id, const char *server, char **url)
{
    *url = NULL;
    json_t *info = NULL;
    char *path = mb_asprintf("/local-sandbox/%s", id);
    int rc = mb_cl_api(cl, "GET", path, NULL, id, &info);
    free(path);
    if (rc) return rc;
    mb_buf names = {0};
    size_t i;
    const json_t *srv;
    json_array_foreach(json_object_get(info, "servers"), i, srv) {
        const char *name = mb_cl_str(srv, "server_name");
        if (strcmp(name, server)) {
            mb_buf_printf(&names, "%s%s", names.len ? ", " : "", name);
            continue;
        }
        const char *u = mb_cl_str(srv, "mcp_server_url");
        if (*u) {
            *url = mb_strdup(u);
        } else {
            const char *why = mb_cl_str(json_object_get(srv, "metadata"), "error");
            rc = mb_cl_fail(cl, MB_CL_FAIL, "server %s of sandbox %s is not running (%s)", server,
                            id, *why ? why : server_state(srv));
        }
        break;
    }
    if (!rc && !*url)
        rc = mb_cl_fail(cl, MB_CL_NOTFOUND, "sandbox %s has no server '%s' (it has: %s); acquire "
                        "a sandbox with it: `mcpbox acquire %s`", id, server,
                        names.len ? names.data : "none", server);
    mb_buf_free(&names);
    json_decref(info);
    return rc;
}

/* -------------------------------------------------------------- rm, reset */

/* DELETE or POST .../reset for each id operand; the first failure's status
 * is returned. */
static int each_id(int argc, char **argv, const mb_cl_cmd *cmd, int is_reset)
{
    mb_cl cl;
    int rc = mb_cl_start(&cl, cmd, argc, argv, NULL);
    if (rc >= 0) goto out;
    rc = MB_CL_OK;
    json_t *all = json_array();
    for (int i = optind; i < argc; i++) {
        char *id = NULL;
        int r = mb_cl_resolve_id(&cl, argv[i], &id);
        json_t *res = NULL;
        if (!r) {
            char *path = mb_asprintf(is_reset ? "/local-sandbox/%s/reset" : "/local-sandbox/%s",
                                     id);
            r = mb_cl_api(&cl, is_reset ? "POST" : "DELETE", path, NULL, id, &res);
            free(path);
        }
        if (!r && cl.json) {
            json_object_set_new(res, "local_sandbox_id", json_string(id));
            json_array_append(all, res);
        } else if (!r) {
            const char *msg = mb_cl_str(res, "message");
            char *clean = mb_cl_clean(*msg ? msg : "done", 0);
            printf("%s %s: %s\n", is_reset ? "reset" : "released", id, clean);
            free(clean);
        }
        if (r && (!rc || r == MB_CL_UNREACHABLE || r == MB_CL_AUTH)) rc = r;
        json_decref(res);
        free(id);
        if (r == MB_CL_UNREACHABLE || r == MB_CL_AUTH) break; /* the next would fail alike */
    }
    if (cl.json && !is_reset) mb_cl_print_json(all);
    else if (cl.json && json_array_size(all)) mb_cl_print_json(json_array_get(all, 0));
    json_decref(all);
out:
    mb_cl_free(&cl);
    return rc;
}

int mb_cmd_rm(int argc, char **argv)
{
    static const mb_cl_cmd cmd = {
        "rm", "usage: mcpbox rm ID...\nReleases sandboxes (their servers and /data go).\n",
        NULL, NULL, NULL, 1, -1, "one or more sandbox ids"};
    return each_id(argc, argv, &cmd, 0);
}

int mb_cmd_reset(int argc, char **argv)
{
    static const mb_cl_cmd cmd = {
        "reset",
        "usage: mcpbox reset ID\nPuts /data back as the last push (or the seed) left it and "
        "restarts the servers.\n",
        NULL, NULL, NULL, 1, 1, "one sandbox id"};
    return each_id(argc, argv, &cmd, 1);
}
