/*
 * compute.c - the compute_* tools of google-cloud-mcp over the project's
 * emulated instances (src/gcloud/compute.c): operations finish at once, so
 * compute_wait_for_operation succeeds for any operation the project made.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "servers/common/pyschema.h"
#include "servers/google_cloud/gc_srv.h"

static int inst_denied(mb_mcp_result *res, const char *name)
{
    return gc_textf(res, "Access denied: Instance '%s' is not in allowed instances list", name);
}

int gc_t_compute_list_instances(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *zone = gc_arg(a, "zone");
    mb_gc *gc = gc_open(call, res, "Error listing Compute Engine instances");
    if (!gc) return 0;
    json_t *l = mb_gc_ce_list(gc, zone);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i, n = 0;
    json_t *x;
    json_array_foreach(l, i, x) {
        const char *name = json_string_value(json_object_get(x, "name"));
        if (!gc_allowed(call, GC_ACL_INSTANCES, name)) continue;
        mb_buf_printf(&b, "%s- %s: %s in %s", n++ ? "\n" : "", name, json_string_value(json_object_get(x, "status")),
                      json_string_value(json_object_get(x, "zone")));
    }
    gc_textf(res, "Found %zu instances:\n%s", n, b.data);
    mb_buf_free(&b);
    json_decref(l);
    mb_gc_close(gc);
    return 0;
}

int gc_t_compute_create_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "instance_name"), *zone = gc_arg(a, "zone"), *mt = gc_arg(a, "machine_type");
    if (!gc_allowed(call, GC_ACL_INSTANCES, name)) return inst_denied(res, name);
    mb_gc *gc = gc_open(call, res, "Error creating Compute Engine instance");
    if (!gc) return 0;
    mb_err e = {0};
    char op[64];
    if (mb_gc_ce_create(gc, name, zone, mt, "RUNNING", NULL, NULL, op, &e))
        gc_textf(res, "Error creating Compute Engine instance: %d %s", gc_http_code(e.code), e.msg);
    else gc_textf(res, "Successfully initiated creation of instance '%s' in zone '%s'", name, zone);
    mb_gc_close(gc);
    return 0;
}

static int action(mb_mcp_call *call, json_t *a, mb_mcp_result *res, const char *act, const char *err_what,
                  const char *noun)
{
    const char *name = gc_arg(a, "instance_name"), *zone = gc_arg(a, "zone");
    if (!gc_allowed(call, GC_ACL_INSTANCES, name)) return inst_denied(res, name);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error %s Compute Engine instance", err_what);
    if (gc) {
        mb_err e = {0};
        char op[64];
        if (mb_gc_ce_action(gc, name, zone, act, op, &e))
            gc_textf(res, "%s: %d %s", pre, gc_http_code(e.code), e.msg);
        else gc_textf(res, "Successfully initiated %s of instance '%s' in zone '%s'", noun, name, zone);
    }
    return gc_end(gc, pre);
}

int gc_t_compute_delete_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    return action(call, a, res, "delete", "deleting", "deletion");
}

int gc_t_compute_start_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    return action(call, a, res, "start", "starting", "start");
}

int gc_t_compute_stop_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    return action(call, a, res, "stop", "stopping", "stop");
}

int gc_t_compute_restart_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "instance_name"), *zone = gc_arg(a, "zone");
    if (!gc_allowed(call, GC_ACL_INSTANCES, name)) return inst_denied(res, name);
    mb_gc *gc = gc_open(call, res, "Error restarting Compute Engine instance");
    if (!gc) return 0;
    json_t *inst;
    mb_err e = {0};
    if (!mb_gc_ce_get(gc, name, zone, &inst, NULL)) {
        const char *st = json_string_value(json_object_get(inst, "status"));
        if (strcmp(st, "RUNNING") && strcmp(st, "STOPPING")) {
            gc_textf(res, "Cannot restart instance '%s': current status is '%s'. Instance must be RUNNING or "
                          "STOPPING to restart.", name, st);
            json_decref(inst);
            mb_gc_close(gc);
            return 0;
        }
        json_decref(inst);
    }
    char op[64];
    if (mb_gc_ce_action(gc, name, zone, "reset", op, &e))
        gc_textf(res, "Error restarting Compute Engine instance: %d %s", gc_http_code(e.code), e.msg);
    else gc_textf(res, "Successfully initiated restart of instance '%s' in zone '%s'", name, zone);
    mb_gc_close(gc);
    return 0;
}

int gc_t_compute_get_instance(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *name = gc_arg(a, "instance_name"), *zone = gc_arg(a, "zone");
    if (!gc_allowed(call, GC_ACL_INSTANCES, name)) return inst_denied(res, name);
    char *pre;
    mb_gc *gc = gc_begin(call, res, &pre, "Error getting instance info for '%s'", name);
    if (gc) {
        json_t *inst;
        mb_err e = {0};
        if (mb_gc_ce_get(gc, name, zone, &inst, &e)) {
            gc_textf(res, "%s: %d %s", pre, gc_http_code(e.code), e.msg);
        } else {
            long long id = json_integer_value(json_object_get(inst, "id"));
            mb_buf labels = {0};
            mb_py_repr_json(&labels, json_object_get(inst, "labels"));
            gc_textf(res, "Instance Information for '%s':\nStatus: %s\nZone: %s\nMachine Type: %s\nCreated: %s\n"
                          "Internal IP: 10.128.%lld.%lld\nExternal IP: None\nBoot Disk: Unknown GB\n"
                          "Network Tags: []\nLabels: %s",
                     name, json_string_value(json_object_get(inst, "status")), zone,
                     json_string_value(json_object_get(inst, "machine_type")),
                     json_string_value(json_object_get(inst, "created")), (id >> 8) % 256, id % 254 + 2,
                     labels.data);
            mb_buf_free(&labels);
            json_decref(inst);
        }
    }
    return gc_end(gc, pre);
}

int gc_t_compute_list_zones(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    (void)call;
    (void)a;
    size_t n = 0;
    while (mb_gc_zones[n]) n++;
    mb_buf b = {0};
    mb_buf_printf(&b, "Found %zu available zones:\n", n);
    for (size_t i = 0; i < n && i < 20; i++) mb_buf_printf(&b, "%s- %s", i ? "\n" : "", mb_gc_zones[i]);
    if (n > 20) mb_buf_puts(&b, "...");
    gc_text(res, b.data);
    mb_buf_free(&b);
    return 0;
}

int gc_t_compute_wait_for_operation(mb_mcp_call *call, json_t *a, mb_mcp_result *res)
{
    const char *op = gc_arg(a, "operation_name");
    long long minutes = gc_arg_int(a, "timeout_minutes");
    mb_gc *gc = gc_open(call, res, "Error waiting for operation");
    if (!gc) return 0;
    json_t *o;
    if (mb_gc_ce_operation(gc, op, &o, NULL)) {
        gc_textf(res, "Operation '%s' timed out after %lld minutes", op, minutes);
    } else {
        gc_textf(res, "Operation '%s' completed successfully", op);
        json_decref(o);
    }
    mb_gc_close(gc);
    return 0;
}
