/*
 * atlas.c - code-executor, MCP-Atlas variant: @geobio/code_execution_server
 * 0.2.1 (bazinga012/mcp_code_executor lineage), nine tools.
 *
 * Settings come from the environment as upstream reads them: CODE_STORAGE_DIR
 * (required), ENV_TYPE (conda | venv | venv-uv, default conda) with
 * CONDA_ENV_NAME / VENV_PATH / UV_VENV_PATH. mcpbox adds ENV_TYPE=system (run
 * Debian's python3 directly, for presets without a virtualenv) and falls back
 * to python3 when a configured venv has no bin/activate.
 *
 * Replies follow upstream byte for byte: one text block whose text is
 * JSON.stringify of a status object and which carries "isError" itself (the
 * result has no isError); thrown errors ("Code is required", "Unknown tool")
 * are JSON-RPC errors, as the low-level TypeScript Server sends them.
 *
 * Offline installs: install_dependencies runs upstream's installer only with
 * --online-install; otherwise it installs from a local wheel directory
 * (PIP_FIND_LINKS or --package-cache) with pip --no-index, or refuses with a
 * message saying how to configure one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/code-executor/codeexec.h"
#include "servers/common/proc.h"

#define NODE_MAX_BUFFER (1024 * 1024)

typedef struct env_config {
    char *type, *conda_name, *venv_path, *uv_venv_path; /* NULL = undefined */
} env_config;

typedef struct atlas {
    char *storage;        /* CODE_STORAGE_DIR as given */
    env_config env;
    mb_mcp_roots *roots;
    int online_install;
    char *package_cache;  /* PIP_FIND_LINKS / --package-cache */
    int timeout_s;
    char *desc[3];        /* descriptions that name the environment type */
    mb_mcp_tool tools[10];
} atlas;

static void env_dispose(env_config *e)
{
    free(e->type), free(e->conda_name), free(e->venv_path), free(e->uv_venv_path);
    memset(e, 0, sizeof *e);
}

static void env_copy(env_config *dst, const env_config *src)
{
    dst->type = src->type ? mb_strdup(src->type) : NULL;
    dst->conda_name = src->conda_name ? mb_strdup(src->conda_name) : NULL;
    dst->venv_path = src->venv_path ? mb_strdup(src->venv_path) : NULL;
    dst->uv_venv_path = src->uv_venv_path ? mb_strdup(src->uv_venv_path) : NULL;
}

static json_t *env_json(const env_config *e)
{
    json_t *o = json_object();
    if (e->type) json_object_set_new(o, "type", json_string(e->type));
    if (e->conda_name) json_object_set_new(o, "conda_name", json_string(e->conda_name));
    if (e->venv_path) json_object_set_new(o, "venv_path", json_string(e->venv_path));
    if (e->uv_venv_path) json_object_set_new(o, "uv_venv_path", json_string(e->uv_venv_path));
    return o;
}

static void atlas_free(void *p)
{
    atlas *a = p;
    if (!a) return;
    free(a->storage);
    env_dispose(&a->env);
    mb_mcp_roots_free(a->roots);
    free(a->package_cache);
    for (int i = 0; i < 3; i++) free(a->desc[i]);
    free(a);
}

/* --------------------------------------------------------- replies */

/* The single text block upstream returns: {type, text, isError}. */
static int reply(mb_mcp_result *res, json_t *obj, int is_error)
{
    char *text = mb_js_stringify(obj, 0);
    json_t *b = json_object();
    json_object_set_new(b, "type", json_string("text"));
    json_object_set_new(b, "text", json_string(text));
    json_object_set_new(b, "isError", json_boolean(is_error));
    mb_mcp_content(res, b);
    free(text);
    json_decref(obj);
    return 0;
}

static json_t *status_obj(const char *status) { return json_pack("{s:s}", "status", status); }

static void set_str(json_t *o, const char *k, const char *v) { json_object_set_new(o, k, json_string(v)); }

/* ------------------------------------------------------- execution */

static char *node_join(const char *a, const char *b)
{
    char *cat = mb_asprintf("%s/%s", a, b);
    char *r = cat[0] == '/' ? mb_path_resolve(NULL, cat) : mb_strdup(cat);
    free(cat);
    return r;
}

static int exists_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* getPlatformSpecificCommand(): wraps `cmd` in the environment's activation.
 * Returns NULL with *why set (caller frees) for a configuration error. */
static char *activated(const atlas *a, const char *cmd, char **why)
{
    const env_config *e = &a->env;
    const char *type = e->type ? e->type : "conda";
    if (!strcmp(type, "conda")) {
        if (!e->conda_name || !*e->conda_name) {
            *why = mb_strdup("conda_name is required for conda environment");
            return NULL;
        }
        return mb_asprintf("source $(conda info --base)/etc/profile.d/conda.sh && conda activate "
                           "%s && %s",
                           e->conda_name, cmd);
    }
    if (!strcmp(type, "venv") || !strcmp(type, "venv-uv")) {
        int uv = !strcmp(type, "venv-uv");
        const char *vp = uv ? e->uv_venv_path : e->venv_path;
        if (!vp || !*vp) {
            *why = mb_strdup(uv ? "uv_venv_path is required for uv virtualenv"
                                : "venv_path is required for virtualenv");
            return NULL;
        }
        char *act = node_join(vp, "bin/activate");
        if (!exists_file(act)) { /* mcpbox: no venv in this seed, use the system python */
            free(act);
            return mb_strdup(cmd);
        }
        char *r = mb_asprintf("source %s && %s", act, cmd);
        free(act);
        return r;
    }
    if (!strcmp(type, "system")) return mb_strdup(cmd);
    *why = mb_asprintf("Unsupported environment type: %s", type);
    return NULL;
}

static int call_cancelled(void *ctx) { return mb_mcp_call_cancelled(ctx); }

/* A venv/venv-uv environment whose bin/activate exists (pip can install into it). */
static int has_venv(const atlas *a)
{
    const env_config *e = &a->env;
    const char *type = e->type ? e->type : "conda";
    const char *vp = !strcmp(type, "venv") ? e->venv_path : !strcmp(type, "venv-uv") ? e->uv_venv_path : NULL;
    if (!vp || !*vp) return 0;
    char *act = node_join(vp, "bin/activate");
    int ok = exists_file(act);
    free(act);
    return ok;
}

typedef struct exec_out {
    int failed;    /* exec rejected: `error` holds error.message */
    char *error;
    char *out, *err;
} exec_out;

static void exec_out_dispose(exec_out *x)
{
    free(x->error), free(x->out), free(x->err);
    memset(x, 0, sizeof *x);
}

/* execAsync(command, {cwd: storage, shell: /bin/bash, env + PYTHONUNBUFFERED}) */
static void run_shell(mb_mcp_call *call, const atlas *a, const char *command, exec_out *x)
{
    memset(x, 0, sizeof *x);
    setenv("PYTHONUNBUFFERED", "1", 1);
    const char *argv[] = {"/bin/bash", "-c", command, NULL};
    mb_proc_spec spec = {
        .argv = argv,
        .cwd = a->storage,
        .timeout_ms = a->timeout_s > 0 ? a->timeout_s * 1000 : -1,
        .max_output = NODE_MAX_BUFFER,
        .kill_on_overflow = 1,
        .kill_group = 1,
        .watch_fd = mb_mcp_call_input_fd(call),
        .cancelled = call_cancelled,
        .ctx = call,
    };
    mb_proc_result pr;
    mb_err err = {0};
    if (mb_proc_run(&spec, &pr, &err) != MB_OK) {
        x->failed = 1;
        x->error = mb_strdup(err.msg);
        return;
    }
    x->out = mb_utf8_repair(pr.out.data, pr.out.len, NULL);
    x->err = mb_utf8_repair(pr.err.data, pr.err.len, NULL);
    if (pr.overflowed) {
        x->failed = 1;
        x->error = mb_asprintf("%s maxBuffer length exceeded", pr.out_truncated ? "stdout" : "stderr");
    } else if (pr.timed_out || !pr.exited || pr.exit_code != 0) {
        x->failed = 1;
        x->error = mb_asprintf("Command failed: %s\n%s%s", command, x->err,
                               pr.timed_out ? "\n(mcpbox: stopped after the time limit)" : "");
    }
    mb_proc_result_free(&pr);
}

/* Confines a path argument (relative paths are taken from the server's cwd, as
 * Node's fs does). Returns 0, or -1 with *why (caller frees) set to the refusal. */
static int confine(const atlas *a, const char *path, char **why)
{
    char *abs = mb_path_resolve(NULL, path), *real = NULL;
    int rc = mb_mcp_resolve(a->roots, abs, &real, why) == MB_OK ? 0 : -1;
    free(abs), free(real);
    return rc;
}

static char *random_name(const char *filename)
{
    unsigned char r[4];
    char hex[9];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, hex);
    if (filename) {
        size_t n = strlen(filename);
        if (n >= 3 && !strcmp(filename + n - 3, ".py")) n -= 3;
        return mb_asprintf("%.*s_%s.py", (int)n, filename, hex);
    }
    return mb_asprintf("code_%s.py", hex);
}

static int write_text(const char *path, const char *data, size_t n, int append, char **why)
{
    int fd = mb_open_file(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
    if (fd < 0) {
        *why = mb_node_fs_error(errno, "open", path, NULL);
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            *why = mb_node_fs_error(errno, "write", NULL, NULL);
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    close(fd);
    return 0;
}

/* Runs a Python file; builds upstream's execute result object. */
static json_t *execute_file(mb_mcp_call *call, const atlas *a, const char *path, int *is_error)
{
    char *py = mb_asprintf("python3 -u \"%s\"", path);
    char *why = NULL;
    char *cmd = activated(a, py, &why);
    free(py);
    json_t *o;
    if (!cmd) {
        o = status_obj("error");
        set_str(o, "error", why);
        set_str(o, "file_path", path);
        free(why);
        *is_error = 1;
        return o;
    }
    exec_out x;
    run_shell(call, a, cmd, &x);
    free(cmd);
    if (x.failed) {
        o = status_obj("error");
        set_str(o, "error", x.error);
        set_str(o, "file_path", path);
        *is_error = 1;
    } else {
        int has_err = x.err && *x.err;
        o = status_obj(has_err ? "error" : "success");
        set_str(o, "output", has_err ? x.err : x.out);
        set_str(o, "file_path", path);
        *is_error = has_err;
    }
    exec_out_dispose(&x);
    return o;
}

/* ------------------------------------------------------------ tools */

static const char *arg_s(json_t *args, const char *k)
{
    json_t *v = args ? json_object_get(args, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* JavaScript truthiness of args[k] (what `!args?.code` tests). */
static int truthy(json_t *args, const char *k)
{
    json_t *v = args ? json_object_get(args, k) : NULL;
    if (!v || json_is_null(v) || json_is_false(v)) return 0;
    if (json_is_string(v)) return json_string_length(v) > 0;
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    if (json_is_real(v)) return json_real_value(v) != 0;
    return 1;
}

static int tool_execute_code(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    if (!truthy(args, "code")) return mb_mcp_fail(res, "Code is required");
    const char *fname = arg_s(args, "filename");
    char *name = random_name(fname && *fname ? fname : NULL);
    char *path = node_join(a->storage, name);
    char *why = NULL;
    json_t *o;
    int is_error = 1;
    json_t *codev = json_object_get(args, "code");
    char *code = json_is_string(codev) ? mb_strdup(json_string_value(codev)) : mb_js_stringify(codev, 0);
    if (confine(a, path, &why) != 0 || write_text(path, code, strlen(code), 0, &why) != 0) {
        o = status_obj("error");
        set_str(o, "error", why);
        set_str(o, "file_path", path);
    } else {
        o = execute_file(call, a, path, &is_error);
    }
    free(why);
    set_str(o, "generated_filename", name);
    free(code), free(path), free(name);
    return reply(res, o, is_error);
}

static int tool_initialize_code_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    if (!truthy(args, "content")) return mb_mcp_fail(res, "Content is required");
    const char *fname = arg_s(args, "filename");
    char *name = random_name(fname && *fname ? fname : NULL);
    char *path = node_join(a->storage, name);
    char *why = NULL, *c = NULL;
    const char *content = arg_s(args, "content");
    if (!content) content = c = mb_js_stringify(json_object_get(args, "content"), 0);
    json_t *o;
    int is_error = 0;
    if (confine(a, path, &why) != 0 || write_text(path, content, strlen(content), 0, &why) != 0) {
        o = status_obj("error");
        set_str(o, "error", why);
        is_error = 1;
    } else {
        o = status_obj("success");
        set_str(o, "message", "File initialized successfully");
        set_str(o, "file_path", path);
        set_str(o, "filename", name);
    }
    free(why), free(c), free(path), free(name);
    return reply(res, o, is_error);
}

/* `await access(filePath)` with Node's error text. */
static int node_access(const char *path, char **why)
{
    if (access(path, F_OK) == 0) return 0;
    *why = mb_node_fs_error(errno, "access", path, NULL);
    return -1;
}

static json_t *file_error(const char *why, const char *path)
{
    json_t *o = status_obj("error");
    set_str(o, "error", why);
    set_str(o, "file_path", path);
    return o;
}

static int tool_append_to_code_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    if (!truthy(args, "file_path")) return mb_mcp_fail(res, "File path is required");
    if (!truthy(args, "content")) return mb_mcp_fail(res, "Content is required");
    const char *path = arg_s(args, "file_path");
    const char *content = arg_s(args, "content");
    char *why = NULL, *c = NULL;
    if (!path) return mb_mcp_fail(res, "The \"path\" argument must be of type string");
    if (!content) content = c = mb_js_stringify(json_object_get(args, "content"), 0);
    json_t *o;
    int is_error = 1;
    if (confine(a, path, &why) != 0 || node_access(path, &why) != 0 ||
        write_text(path, content, strlen(content), 1, &why) != 0) {
        o = file_error(why, path);
    } else {
        o = status_obj("success");
        set_str(o, "message", "Content appended successfully");
        set_str(o, "file_path", path);
        is_error = 0;
    }
    free(why), free(c);
    return reply(res, o, is_error);
}

static int tool_execute_code_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    if (!truthy(args, "file_path")) return mb_mcp_fail(res, "File path is required");
    const char *path = arg_s(args, "file_path");
    if (!path) return mb_mcp_fail(res, "The \"path\" argument must be of type string");
    char *why = NULL;
    json_t *o;
    int is_error = 1;
    if (confine(a, path, &why) != 0 || node_access(path, &why) != 0) o = file_error(why, path);
    else o = execute_file(call, a, path, &is_error);
    free(why);
    return reply(res, o, is_error);
}

static int tool_read_code_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    if (!truthy(args, "file_path")) return mb_mcp_fail(res, "File path is required");
    const char *path = arg_s(args, "file_path");
    if (!path) return mb_mcp_fail(res, "The \"path\" argument must be of type string");
    char *why = NULL;
    json_t *o;
    int is_error = 1;
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    if (confine(a, path, &why) != 0 || node_access(path, &why) != 0) {
        o = file_error(why, path);
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        why = mb_node_fs_error(EISDIR, "read", NULL, NULL);
        o = file_error(why, path);
    } else if (mb_read_file(path, (size_t)256 << 20, &text, &len, NULL) != MB_OK) {
        why = mb_node_fs_error(errno ? errno : EIO, "open", path, NULL);
        o = file_error(why, path);
    } else {
        char *fixed = mb_utf8_repair(text, len, NULL);
        o = status_obj("success");
        set_str(o, "content", fixed);
        set_str(o, "file_path", path);
        free(fixed);
        is_error = 0;
    }
    free(text), free(why);
    return reply(res, o, is_error);
}

static const char *type_of(const atlas *a) { return a->env.type ? a->env.type : "conda"; }

static int packages_arg(json_t *args, json_t **pk)
{
    *pk = args ? json_object_get(args, "packages") : NULL;
    return json_is_array(*pk);
}

/* " ".join(packages) as JavaScript's Array#join renders the items. */
static char *join_packages(json_t *pk)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i;
    json_t *v;
    json_array_foreach(pk, i, v) {
        if (i) mb_buf_putc(&b, ' ');
        if (json_is_string(v)) mb_buf_puts(&b, json_string_value(v));
        else if (!json_is_null(v)) {
            char *s = mb_js_stringify(v, 0);
            mb_buf_puts(&b, s);
            free(s);
        }
    }
    return mb_buf_steal(&b);
}

static int tool_install_dependencies(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    json_t *pk;
    if (!packages_arg(args, &pk)) return mb_mcp_fail(res, "Valid packages array is required");
    if (json_array_size(pk) == 0) {
        json_t *o = status_obj("error");
        set_str(o, "error", "No packages specified");
        return reply(res, o, 1);
    }
    const char *type = type_of(a);
    char *list = join_packages(pk);
    char *install = NULL;
    if (a->online_install) {
        if (!strcmp(type, "conda"))
            install = mb_asprintf("conda install -y -n %s %s", a->env.conda_name ? a->env.conda_name : "undefined", list);
        else if (!strcmp(type, "venv")) install = mb_asprintf("pip install %s", list);
        else if (!strcmp(type, "venv-uv")) install = mb_asprintf("uv pip install %s", list);
        else install = mb_asprintf("python3 -m pip install %s", list);
    } else if (a->package_cache && has_venv(a)) {
        install = mb_asprintf("python3 -m pip install --no-index --find-links \"%s\" %s",
                              a->package_cache, list);
    }
    json_t *o;
    int is_error = 1;
    if (!install && a->package_cache) {
        o = status_obj("error");
        set_str(o, "env_type", type);
        char *m = mb_asprintf(
            "Cannot install packages (%s): installing from the local package cache %s needs a "
            "virtualenv (ENV_TYPE venv or venv-uv with an existing bin/activate); the %s "
            "environment here is read-only.",
            list, a->package_cache, type);
        set_str(o, "error", m);
        free(m);
    } else if (!install) {
        o = status_obj("error");
        set_str(o, "env_type", type);
        char *m = mb_asprintf(
            "Cannot install packages (%s): this sandbox has no network access and no local "
            "package cache is configured. Ask the operator to set PIP_FIND_LINKS to a directory "
            "of wheels, or start the server with --online-install on a networked sandbox. "
            "Packages already installed can be checked with check_installed_packages.",
            list);
        set_str(o, "error", m);
        free(m);
    } else {
        char *why = NULL;
        char *cmd = activated(a, install, &why);
        if (!cmd) {
            o = status_obj("error");
            set_str(o, "env_type", type);
            set_str(o, "error", why);
            free(why);
        } else {
            exec_out x;
            run_shell(call, a, cmd, &x);
            if (x.failed) {
                o = status_obj("error");
                set_str(o, "env_type", type);
                set_str(o, "error", x.error);
            } else {
                o = status_obj("success");
                set_str(o, "env_type", type);
                json_object_set(o, "installed_packages", pk);
                set_str(o, "output", x.out);
                if (x.err && *x.err) set_str(o, "warnings", x.err);
                is_error = 0;
            }
            exec_out_dispose(&x);
            free(cmd);
        }
    }
    free(install), free(list);
    return reply(res, o, is_error);
}

/* The probe check_installed_packages runs (same checks as upstream's script:
 * find_spec, import, __version__ or version, __file__). */
static const char CHECK_SCRIPT[] =
    "\nimport importlib\nimport importlib.util\nimport json\n\nreport = {}\n\n"
    "for name in %s:\n"
    "    try:\n"
    "        if importlib.util.find_spec(name) is None:\n"
    "            report[name] = {\"installed\": False, \"error\": \"Package not found\"}\n"
    "            continue\n"
    "        mod = importlib.import_module(name)\n"
    "        ver = getattr(mod, \"__version__\", None)\n"
    "        if ver is None:\n"
    "            ver = getattr(mod, \"version\", None)\n"
    "        report[name] = {\"installed\": True, \"version\": ver,\n"
    "                        \"location\": getattr(mod, \"__file__\", None)}\n"
    "    except ImportError as exc:\n"
    "        report[name] = {\"installed\": False, \"error\": str(exc)}\n"
    "    except Exception as exc:\n"
    "        report[name] = {\"installed\": False, \"error\": f\"Unexpected error: {exc}\"}\n\n"
    "print(json.dumps(report))\n";

static int tool_check_installed_packages(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    json_t *pk;
    if (!packages_arg(args, &pk)) return mb_mcp_fail(res, "Valid packages array is required");
    if (json_array_size(pk) == 0) {
        json_t *o = status_obj("error");
        set_str(o, "error", "No packages specified");
        return reply(res, o, 1);
    }
    const char *type = type_of(a);
    unsigned char r[4];
    char hex[9];
    mb_random_bytes(r, sizeof r, NULL);
    mb_hex(r, sizeof r, hex);
    char *name = mb_asprintf("check_packages_%s.py", hex);
    char *path = node_join(a->storage, name);
    char *list = mb_js_stringify(pk, 0);
    char *script = mb_asprintf(CHECK_SCRIPT, list);
    char *why = NULL;
    json_t *o;
    int is_error = 1;
    if (write_text(path, script, strlen(script), 0, &why) != 0) {
        o = status_obj("error");
        set_str(o, "env_type", type);
        set_str(o, "error", why);
        goto out;
    }
    char *py = mb_asprintf("python3 -u \"%s\"", path);
    char *cmd = activated(a, py, &why);
    free(py);
    if (!cmd) {
        o = status_obj("error");
        set_str(o, "env_type", type);
        set_str(o, "error", why);
        goto out;
    }
    exec_out x;
    run_shell(call, a, cmd, &x);
    free(cmd);
    if (x.failed) {
        o = status_obj("error");
        set_str(o, "env_type", type);
        set_str(o, "error", x.error);
    } else if (x.err && *x.err) {
        o = status_obj("error");
        set_str(o, "error", x.err);
    } else {
        json_error_t jerr;
        json_t *info = json_loads(x.out, JSON_DECODE_ANY, &jerr);
        if (!json_is_object(info)) {
            json_decref(info);
            o = status_obj("error");
            set_str(o, "env_type", type);
            set_str(o, "error", *x.out ? "Unexpected token in JSON" : "Unexpected end of JSON input");
        } else {
            int all = 1;
            json_t *missing = json_array();
            const char *k;
            json_t *v;
            json_object_foreach(info, k, v) {
                if (!json_is_true(json_object_get(v, "installed"))) {
                    all = 0;
                    json_array_append_new(missing, json_string(k));
                }
            }
            o = status_obj("success");
            set_str(o, "env_type", type);
            json_object_set_new(o, "all_installed", json_boolean(all));
            json_object_set_new(o, "not_installed", missing);
            json_object_set_new(o, "package_details", info);
            is_error = 0;
        }
    }
    exec_out_dispose(&x);
out:
    free(why), free(script), free(list), free(path), free(name);
    return reply(res, o, is_error);
}

/* String(value) for the configure_environment fields */
static char *js_string_of(json_t *v)
{
    if (json_is_string(v)) return mb_strdup(json_string_value(v));
    if (json_is_null(v)) return mb_strdup("null");
    if (json_is_boolean(v)) return mb_strdup(json_is_true(v) ? "true" : "false");
    if (json_is_number(v)) return mb_js_number(json_number_value(v));
    if (json_is_array(v)) {
        mb_buf b = {0};
        mb_buf_puts(&b, "");
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i) mb_buf_putc(&b, ',');
            if (!json_is_null(x)) {
                char *s = js_string_of(x);
                mb_buf_puts(&b, s);
                free(s);
            }
        }
        return mb_buf_steal(&b);
    }
    return mb_strdup("[object Object]");
}

static void refresh_descriptions(atlas *a);

static int tool_configure_environment(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    json_t *type = args ? json_object_get(args, "type") : NULL;
    char *t = type ? js_string_of(type) : NULL;
    if (!t || (strcmp(t, "conda") && strcmp(t, "venv") && strcmp(t, "venv-uv"))) {
        free(t);
        json_t *o = status_obj("error");
        set_str(o, "error", "Invalid arguments: 'type' is required and must be one of 'conda', "
                            "'venv', or 'venv-uv'");
        return reply(res, o, 1);
    }
    env_config in = {.type = t};
    const char *keys[] = {"conda_name", "venv_path", "uv_venv_path"};
    char **slots[] = {&in.conda_name, &in.venv_path, &in.uv_venv_path};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(args, keys[i]);
        if (v) *slots[i] = js_string_of(v);
    }
    const char *bad = NULL;
    if (!strcmp(t, "conda") && (!in.conda_name || !*in.conda_name))
        bad = "conda_name is required when type is 'conda'";
    else if (!strcmp(t, "venv") && (!in.venv_path || !*in.venv_path))
        bad = "venv_path is required when type is 'venv'";
    else if (!strcmp(t, "venv-uv") && (!in.uv_venv_path || !*in.uv_venv_path))
        bad = "uv_venv_path is required when type is 'venv-uv'";
    if (bad) {
        env_dispose(&in);
        json_t *o = status_obj("error");
        set_str(o, "error", bad);
        return reply(res, o, 1);
    }
    env_config prev;
    env_copy(&prev, &a->env);
    free(a->env.type);
    a->env.type = mb_strdup(t);
    for (int i = 0; i < 3; i++) {
        char **cur = i == 0 ? &a->env.conda_name : i == 1 ? &a->env.venv_path : &a->env.uv_venv_path;
        if (*slots[i] && **slots[i]) {
            free(*cur);
            *cur = mb_strdup(*slots[i]);
        }
    }
    env_dispose(&in);
    refresh_descriptions(a);
    json_t *o = status_obj("success");
    set_str(o, "message", "Environment configuration updated");
    json_object_set_new(o, "previous", env_json(&prev));
    json_object_set_new(o, "current", env_json(&a->env));
    env_dispose(&prev);
    return reply(res, o, 0);
}

static int tool_get_environment_config(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    atlas *a = mb_mcp_call_data(call);
    json_t *o = status_obj("success");
    json_object_set_new(o, "config", env_json(&a->env));
    return reply(res, o, 0);
}

static int tool_unknown(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return mb_mcp_fail(res, "Unknown tool");
}

/* ------------------------------------------------------------ setup */

static const char *const SCHEMAS[] = {
    "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"description\":\"Python "
    "code to execute\"},\"filename\":{\"type\":\"string\",\"description\":\"Optional: Name of the "
    "file to save the code (default: generated UUID)\"}},\"required\":[\"code\"]}",
    "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\",\"description\":"
    "\"Initial content to write to the file\"},\"filename\":{\"type\":\"string\",\"description\":"
    "\"Optional: Name of the file (default: generated UUID)\"}},\"required\":[\"content\"]}",
    "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":"
    "\"Full path to the file\"},\"content\":{\"type\":\"string\",\"description\":\"Content to "
    "append to the file\"}},\"required\":[\"file_path\",\"content\"]}",
    "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":"
    "\"Full path to the Python file to execute\"}},\"required\":[\"file_path\"]}",
    "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":"
    "\"Full path to the file to read\"}},\"required\":[\"file_path\"]}",
    "{\"type\":\"object\",\"properties\":{\"packages\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"},\"description\":\"List of packages to install\"}},\"required\":[\"packages\"]}",
    "{\"type\":\"object\",\"properties\":{\"packages\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"},\"description\":\"List of packages to check\"}},\"required\":[\"packages\"]}",
    "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"conda\","
    "\"venv\",\"venv-uv\"],\"description\":\"Type of Python environment\"},\"conda_name\":"
    "{\"type\":\"string\",\"description\":\"Name of the conda environment (required if type is "
    "'conda')\"},\"venv_path\":{\"type\":\"string\",\"description\":\"Path to the virtualenv "
    "(required if type is 'venv')\"},\"uv_venv_path\":{\"type\":\"string\",\"description\":\"Path "
    "to the UV virtualenv (required if type is 'venv-uv')\"}},\"required\":[\"type\"]}",
    "{\"type\":\"object\",\"properties\":{}}",
};

static void refresh_descriptions(atlas *a)
{
    const char *t = type_of(a);
    for (int i = 0; i < 3; i++) free(a->desc[i]);
    a->desc[0] = mb_asprintf("Execute Python code in the %s environment. For short code snippets "
                             "only. For longer code, use initialize_code_file and "
                             "append_to_code_file instead.",
                             t);
    a->desc[1] = mb_asprintf("Install Python dependencies in the %s environment", t);
    a->desc[2] = mb_asprintf("Check if packages are installed in the %s environment", t);
    a->tools[0].description = a->desc[0];
    a->tools[5].description = a->desc[1];
    a->tools[6].description = a->desc[2];
}

static const mb_mcp_info ATLAS_INFO = {
    .name = "code-executor",
    .version = "0.3.0", /* what the published build's Server says (package.json: 0.2.x) */
    .flavor = MB_MCP_TS_SERVER,
    .capabilities = "{\"tools\":{}}",
    .unknown_tool = tool_unknown,
    .max_protocol = "2024-11-05", /* TypeScript SDK 0.6.0's newest */
};

static char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v ? mb_strdup(v) : NULL;
}

int mb_codeexec_atlas_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"storage-dir", required_argument, 0, 's'},
        {"allowed-dir", required_argument, 0, 'a'},
        {"online-install", no_argument, 0, 'o'},
        {"package-cache", required_argument, 0, 'p'},
        {"timeout", required_argument, 0, 't'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    atlas *a = mb_calloc(1, sizeof *a);
    a->timeout_s = 300;
    char **dirs = mb_calloc((size_t)argc + 3, sizeof(char *));
    size_t ndirs = 0;
    int rc = MB_OK, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's': setenv("CODE_STORAGE_DIR", optarg, 1); break;
        case 'a': dirs[ndirs++] = optarg; break;
        case 'o': a->online_install = 1; break;
        case 'p': free(a->package_cache), a->package_cache = mb_strdup(optarg); break;
        case 't': a->timeout_s = atoi(optarg); break;
        default:
            rc = mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
            goto fail;
        }
    }
    if (optind < argc) {
        rc = mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
        goto fail;
    }
    const char *storage = getenv("CODE_STORAGE_DIR");
    if (!storage || !*storage) {
        rc = mb_err_set(err, MB_EIO, "Missing required environment variable: CODE_STORAGE_DIR");
        goto fail;
    }
    a->storage = mb_strdup(storage);
    const char *type = getenv("ENV_TYPE");
    a->env.type = mb_strdup(type && *type ? type : "conda");
    a->env.conda_name = env_or_null("CONDA_ENV_NAME");
    a->env.venv_path = env_or_null("VENV_PATH");
    a->env.uv_venv_path = env_or_null("UV_VENV_PATH");
    if (!strcmp(a->env.type, "conda") && (!a->env.conda_name || !*a->env.conda_name))
        rc = mb_err_set(err, MB_EIO, "Missing required environment variable: CONDA_ENV_NAME "
                                     "(required for conda environment)");
    else if (!strcmp(a->env.type, "venv") && (!a->env.venv_path || !*a->env.venv_path))
        rc = mb_err_set(err, MB_EIO, "Missing required environment variable: VENV_PATH (required "
                                     "for virtualenv)");
    else if (!strcmp(a->env.type, "venv-uv") && (!a->env.uv_venv_path || !*a->env.uv_venv_path))
        rc = mb_err_set(err, MB_EIO, "Missing required environment variable: UV_VENV_PATH "
                                     "(required for uv virtualenv)");
    if (rc) goto fail;
    if (!a->package_cache && getenv("PIP_FIND_LINKS") && *getenv("PIP_FIND_LINKS"))
        a->package_cache = mb_strdup(getenv("PIP_FIND_LINKS"));
    if ((rc = mb_mkdir_p(storage, 0755, err))) goto fail;

    /* confinement: the storage directory, plus /data (or --allowed-dir) */
    struct stat st;
    if (!ndirs && stat("/data", &st) == 0) dirs[ndirs++] = "/data";
    dirs[ndirs++] = a->storage;
    if ((rc = mb_mcp_roots_new(dirs, ndirs, &a->roots, err))) goto fail;

    mb_mcp_tool_fn fns[] = {tool_execute_code,        tool_initialize_code_file,
                            tool_append_to_code_file, tool_execute_code_file,
                            tool_read_code_file,      tool_install_dependencies,
                            tool_check_installed_packages, tool_configure_environment,
                            tool_get_environment_config};
    const char *names[] = {"execute_code",      "initialize_code_file",     "append_to_code_file",
                           "execute_code_file", "read_code_file",           "install_dependencies",
                           "check_installed_packages", "configure_environment",
                           "get_environment_config"};
    const char *descs[] = {
        NULL,
        "Create a new Python file with initial content. Use this as the first step for longer "
        "code that may exceed token limits. Follow with append_to_code_file for additional code.",
        "Append content to an existing Python code file. Use this to add more code to a file "
        "created with initialize_code_file, allowing you to build up larger code bases in parts.",
        "Execute an existing Python file. Use this as the final step after building up code "
        "with initialize_code_file and append_to_code_file.",
        "Read the content of an existing Python code file. Use this to verify the current state "
        "of a file before appending more content or executing it.",
        NULL,
        NULL,
        "Change the environment configuration settings",
        "Get the current environment configuration",
    };
    for (int i = 0; i < 9; i++)
        a->tools[i] = (mb_mcp_tool){.name = names[i],
                                    .description = descs[i] ? descs[i] : "",
                                    .input_schema = SCHEMAS[i],
                                    .fn = fns[i]};
    refresh_descriptions(a);
    free(dirs);
    dirs = NULL;
    return mb_mcp_server_new_with_tools(&ATLAS_INFO, a->tools, a, atlas_free, out, err);
fail:
    free(dirs);
    atlas_free(a);
    return rc;
}
