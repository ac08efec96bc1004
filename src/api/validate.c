/*
 * validate.c - request body validation with FastAPI/pydantic-shaped errors:
 * 422 {"detail":[{"type","loc","msg","input","ctx"?}]}, one item per problem,
 * so that clients which already parse Klavis's errors keep working.
 */
#include "api/api.h"
#include "egress/egress.h"

#include <stdlib.h>
#include <string.h>

static void add_error(json_t *detail, const char *type, json_t *loc, const char *msg,
                      json_t *input, json_t *ctx)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string(type));
    json_object_set_new(e, "loc", loc);
    json_object_set_new(e, "msg", json_string(msg));
    json_object_set_new(e, "input", input ? json_incref(input) : json_null());
    if (ctx) json_object_set_new(e, "ctx", ctx);
    json_array_append_new(detail, e);
}

/* "'a', 'b' or 'c'", as pydantic lists enum members. */
static char *expected_list(const char *const *names, size_t n)
{
    mb_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (i) mb_buf_puts(&b, i + 1 == n ? " or " : ", ");
        mb_buf_printf(&b, "'%s'", names[i]);
    }
    return mb_buf_steal(&b);
}

static void enum_error(json_t *detail, json_t *loc, json_t *input, const char *const *names,
                       size_t n)
{
    char *exp = expected_list(names, n);
    char *msg = mb_asprintf("Input should be %s", exp);
    add_error(detail, "enum", loc, msg, input, json_pack("{s:s}", "expected", exp));
    free(msg);
    free(exp);
}

static void parse_servers(json_t *v, int local_dev, mb_acquire_body *out, json_t *detail)
{
    if (!v) {
        if (local_dev) v = json_string("ALL");
        else return; /* reported as missing by the caller */
    } else {
        json_incref(v);
    }
    if (json_is_string(v)) {
        if (strcmp(json_string_value(v), "ALL") != 0) {
            add_error(detail, "literal_error", json_pack("[s,s]", "body", "server_names"),
                      "Input should be 'ALL' or a list of server names", v,
                      json_pack("{s:s}", "expected", "'ALL'"));
        } else {
            out->servers = mb_calloc(mb_n_server_names, sizeof *out->servers);
            for (size_t i = 0; i < mb_n_server_names; i++)
                out->servers[out->n_servers++] = mb_strdup(mb_server_names[i]);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *item;
        out->servers = mb_calloc(json_array_size(v) + 1, sizeof *out->servers);
        json_array_foreach(v, i, item) {
            const char *name = json_is_string(item) ? json_string_value(item) : NULL;
            if (!name || !mb_is_server_name(name)) {
                enum_error(detail, json_pack("[s,s,I]", "body", "server_names", (json_int_t)i),
                           item, mb_server_names, mb_n_server_names);
                continue;
            }
            int dup = 0;
            for (size_t j = 0; j < out->n_servers; j++)
                if (!strcmp(out->servers[j], name)) dup = 1;
            if (!dup) out->servers[out->n_servers++] = mb_strdup(name);
        }
    } else {
        add_error(detail, "list_type", json_pack("[s,s]", "body", "server_names"),
                  "Input should be a valid list or 'ALL'", v, NULL);
    }
    json_decref(v);
}

static void parse_ttl(json_t *v, int64_t default_ttl, mb_acquire_body *out, json_t *detail)
{
    json_t *loc = json_pack("[s,s]", "body", "ttl_seconds");
    if (!v) {
        out->ttl_seconds = default_ttl;
        json_decref(loc);
        return;
    }
    if (json_is_null(v)) {
        out->ttl_seconds = -1;
        json_decref(loc);
        return;
    }
    long long n = 0;
    int ok = 0;
    if (json_is_integer(v)) {
        n = json_integer_value(v);
        ok = 1;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == (double)(long long)d) {
            n = (long long)d;
            ok = 1;
        } else {
            add_error(detail, "int_from_float", loc,
                      "Input should be a valid integer, got a number with a fractional part", v,
                      NULL);
            return;
        }
    } else if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        n = strtoll(s, &end, 10);
        ok = *s && !*end;
        if (!ok) {
            add_error(detail, "int_parsing", loc,
                      "Input should be a valid integer, unable to parse string as an integer", v,
                      NULL);
            return;
        }
    }
    if (!ok) {
        add_error(detail, "int_type", loc, "Input should be a valid integer", v, NULL);
        return;
    }
    if (n < 60) {
        add_error(detail, "greater_than_equal", loc, "Input should be greater than or equal to 60",
                  v, json_pack("{s:i}", "ge", 60));
        return;
    }
    if (n > 86400) {
        add_error(detail, "less_than_equal", loc, "Input should be less than or equal to 86400", v,
                  json_pack("{s:i}", "le", 86400));
        return;
    }
    out->ttl_seconds = n;
    json_decref(loc);
}

/* An optional string field: NULL/absent/null, or a string copied to *out. */
static void parse_opt_string(json_t *root, const char *key, char **out, json_t *detail)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) return;
    if (json_is_string(v))
        *out = mb_strdup(json_string_value(v));
    else
        add_error(detail, "string_type", json_pack("[s,s]", "body", key),
                  "Input should be a valid string", v, NULL);
}

/* "egress": null/absent, or a list of at most MB_ACQUIRE_EGRESS_MAX allow-list
 * entries (src/egress: "*", "*.name", a host name, an IP literal); whether
 * they narrow the profile's list is checked later, against the profile. */
static void parse_egress(json_t *v, mb_acquire_body *out, json_t *detail)
{
    if (!v || json_is_null(v)) return;
    if (!json_is_array(v)) {
        add_error(detail, "list_type", json_pack("[s,s]", "body", "egress"),
                  "Input should be a valid list", v, NULL);
        return;
    }
    size_t n = json_array_size(v);
    if (n > MB_ACQUIRE_EGRESS_MAX) {
        char *msg = mb_asprintf("List should have at most %d items after validation, not %zu",
                                MB_ACQUIRE_EGRESS_MAX, n);
        add_error(detail, "too_long", json_pack("[s,s]", "body", "egress"), msg, v,
                  json_pack("{s:s,s:i,s:I}", "field_type", "List", "max_length",
                            MB_ACQUIRE_EGRESS_MAX, "actual_length", (json_int_t)n));
        free(msg);
        return;
    }
    out->egress = mb_calloc(n + 1, sizeof *out->egress);
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        json_t *loc = json_pack("[s,s,I]", "body", "egress", (json_int_t)i);
        const char *e = json_string_value(item);
        if (!json_is_string(item)) {
            add_error(detail, "string_type", loc, "Input should be a valid string", item, NULL);
        } else if (strlen(e) != json_string_length(item) || !mb_egress_entry_valid(e)) {
            add_error(detail, "value_error", loc,
                      "Value error, an egress entry is \"*\", \"*.example.com\", a host name "
                      "(example.com: it and its subdomains) or an IP address",
                      item, json_pack("{s:{}}", "error"));
        } else {
            char *low = mb_strdup(e);
            for (char *c = low; *c; c++)
                if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
            int dup = 0;
            for (size_t j = 0; j < out->n_egress && !dup; j++) dup = !strcmp(out->egress[j], low);
            if (dup) free(low);
            else out->egress[out->n_egress++] = low;
            json_decref(loc);
        }
    }
}

int mb_api_parse_acquire(const char *body, size_t len, int mode, int64_t default_ttl,
                         mb_acquire_body *out, json_t **detail_out)
{
    int local_dev = mode != MB_ACQUIRE_LOCAL; /* body and server_names optional */
    memset(out, 0, sizeof *out);
    json_t *detail = json_array();
    json_error_t jerr;
    json_t *root = NULL;
    if (len == 0 && local_dev) {
        root = json_object();
    } else if (len == 0) {
        add_error(detail, "missing", json_pack("[s]", "body"), "Field required", NULL, NULL);
    } else {
        size_t flags = JSON_REJECT_DUPLICATES | (mode == MB_ACQUIRE_SANDBOX ? JSON_DECODE_ANY : 0);
        root = json_loadb(body, len, flags, &jerr);
        if (root && json_is_null(root) && mode == MB_ACQUIRE_SANDBOX) {
            json_decref(root); /* the whole body is optional there */
            root = json_object();
        }
        if (!root) {
            add_error(detail, "json_invalid", json_pack("[s,i]", "body", jerr.position),
                      "JSON decode error", NULL, json_pack("{s:s}", "error", jerr.text));
        } else if (!json_is_object(root)) {
            add_error(detail, "model_attributes_type", json_pack("[s]", "body"),
                      "Input should be a valid dictionary or object to extract fields from", root,
                      NULL);
            json_decref(root);
            root = NULL;
        }
    }
    if (root) {
        json_t *servers = json_object_get(root, "server_names");
        if (!servers && !local_dev)
            add_error(detail, "missing", json_pack("[s,s]", "body", "server_names"),
                      "Field required", root, NULL);
        if (mode != MB_ACQUIRE_SANDBOX) parse_servers(servers, local_dev, out, detail);
        else parse_opt_string(root, "tag", &out->tag, detail);

        json_t *bench = json_object_get(root, "benchmark");
        if (bench && !json_is_null(bench)) {
            if (json_is_string(bench) && mb_is_benchmark_name(json_string_value(bench)))
                out->benchmark = mb_strdup(json_string_value(bench));
            else
                enum_error(detail, json_pack("[s,s]", "body", "benchmark"), bench,
                           mb_benchmark_names, mb_n_benchmark_names);
        }
        parse_opt_string(root, "test_account_email", &out->test_account_email, detail);
        parse_ttl(json_object_get(root, "ttl_seconds"), default_ttl, out, detail);
        parse_egress(json_object_get(root, "egress"), out, detail);
        json_decref(root);
    }
    if (json_array_size(detail) > 0) {
        mb_acquire_body_free(out);
        *detail_out = detail;
        return MB_EINVAL;
    }
    json_decref(detail);
    *detail_out = NULL;
    return MB_OK;
}

void mb_acquire_body_free(mb_acquire_body *b)
{
    for (size_t i = 0; i < b->n_servers; i++) free(b->servers[i]);
    free(b->servers);
    free(b->benchmark);
    free(b->test_account_email);
    free(b->tag);
    for (size_t i = 0; i < b->n_egress; i++) free(b->egress[i]);
    free(b->egress);
    memset(b, 0, sizeof *b);
}
