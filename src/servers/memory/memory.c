/*
 * memory.c - the `localmemory` server, a native twin of
 * @modelcontextprotocol/server-memory: a knowledge graph of entities and
 * relations kept in a JSON Lines file, with its 9 tools. Two upstream
 * versions, chosen with --upstream-version (MEM_VERSIONS below):
 *   2025.8.4   the default (MCP-Atlas' pin);
 *   2025.4.25  Toolathlon's pin. The same tools, texts, serverInfo (0.6.3),
 *              SDK (1.0.1), file format and MEMORY_FILE_PATH rule; the one
 *              difference is that read_graph, like every tool, refuses a call
 *              without "arguments" ("No arguments provided for tool:
 *              read_graph"), which 2025.8.4 lets through.
 *
 * Faithful to those versions, down to their quirks, because agents and judges
 * read the texts:
 *   - every call sees the file as it is now and every change rewrites it
 *     whole (entities first, then relations, one JSON object per line, no
 *     final newline). Parsing is the costly part, so the last parse is kept
 *     with the file's identity (device, inode, size, mtime, ctime) and used
 *     again while the file has not changed: anything that writes the file,
 *     an agent's shell included, changes ctime, which no one can set back;
 *   - entities read from the file keep their "type" key, so read_graph shows
 *     it; results are JSON.stringify(value, null, 2);
 *   - no argument validation: a missing or mistyped argument gives the
 *     TypeError text JavaScript would throw ("Cannot read properties of
 *     undefined (reading 'filter')"), as a JSON-RPC error -32603, which is how
 *     the TS SDK's low-level Server reports a thrown error;
 *   - MEMORY_FILE_PATH: an absolute path is used as is; a relative one, and
 *     the default memory.json, are taken from the directory holding the
 *     program (upstream: its dist/ directory; here: the mcpbox binary's).
 * One addition: a file holding a single JSON object {"entities": [...],
 * "relations": [...]} (the older JSON export shape) is read as that graph;
 * upstream would fail to parse it. The next change rewrites it as JSONL.
 *
 * JavaScript semantics are kept with a few helpers below (js_get, js_eq,
 * js_includes, js_string_of): JSON values stand in for JS values, NULL for
 * undefined.
 */
#define _GNU_SOURCE /* memmem */
#include "mcp/mcp.h"
#include "servers/servers.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What differs between the upstream versions. */
typedef struct mem_version {
    const char *name;
    int read_graph_without_args; /* read_graph answers a call without "arguments" */
} mem_version;

static const mem_version MEM_VERSIONS[] = {
    {"2025.8.4", 1},
    {"2025.4.25", 0},
};

typedef struct graph {
    json_t *entities;  /* array */
    json_t *relations; /* array */
} graph;

/* The last graph parsed from the file and what the file was then. */
typedef struct graph_cache {
    int valid;
    struct stat st;
    graph g;
} graph_cache;

typedef struct mem_server {
    const mem_version *v;
    char *file;
    graph_cache cache;
} mem_server;


/* ------------------------------------------------ JavaScript semantics */

/* The text of a thrown TypeError is collected here; handlers turn it into
 * mb_mcp_fail(). */
typedef struct jserr {
    char *msg;
} jserr;

static void throw_type(jserr *e, char *msg)
{
    if (!e->msg) e->msg = msg;
    else free(msg);
}

/* v[key] for an object, undefined (NULL) otherwise; reading from undefined
 * or null throws "Cannot read properties of X (reading 'key')". */
static json_t *js_get(jserr *e, json_t *v, const char *key)
{
    if (!v || json_is_null(v)) {
        throw_type(e, mb_asprintf("Cannot read properties of %s (reading '%s')", v ? "null" : "undefined", key));
        return NULL;
    }
    return json_is_object(v) ? json_object_get(v, key) : NULL;
}

/* The array to call `method` on, or NULL after throwing the right
 * TypeError. `expr` is the source expression upstream calls it on. */
static json_t *js_array_for(jserr *e, json_t *v, const char *expr, const char *method)
{
    if (!v || json_is_null(v)) {
        throw_type(e, mb_asprintf("Cannot read properties of %s (reading '%s')", v ? "null" : "undefined", method));
        return NULL;
    }
    if (!json_is_array(v)) {
        throw_type(e, mb_asprintf("%s.%s is not a function", expr, method));
        return NULL;
    }
    return v;
}

/* === (objects and arrays are never equal unless they are the same). */
static int js_eq(const json_t *a, const json_t *b)
{
    if (!a || !b) return !a && !b;
    if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b)) return 0;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_NULL: return 1;
    default: return a == b;
    }
}

/* String(v) / `${v}` */
static char *js_string_of(const json_t *v)
{
    if (!v) return mb_strdup("undefined");
    switch (json_typeof(v)) {
    case JSON_STRING: return mb_memdup0(json_string_value(v), json_string_length(v));
    case JSON_NULL: return mb_strdup("null");
    case JSON_TRUE: return mb_strdup("true");
    case JSON_FALSE: return mb_strdup("false");
    case JSON_INTEGER:
    case JSON_REAL: return mb_js_number(json_number_value(v));
    case JSON_ARRAY: {
        mb_buf b = {0};
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (i) mb_buf_putc(&b, ',');
            if (x && !json_is_null(x)) {
                char *s = js_string_of(x);
                mb_buf_puts(&b, s);
                free(s);
            }
        }
        return mb_buf_steal(&b);
    }
    default: return mb_strdup("[object Object]");
    }
}

/* hay.includes(needle) for an array (SameValueZero) or a string (substring
 * of String(needle)); other receivers throw like `expr.includes(...)`. */
static int js_includes(jserr *e, json_t *hay, const char *expr, json_t *needle)
{
    if (json_is_string(hay)) {
        char *n = js_string_of(needle);
        int hit = memmem(json_string_value(hay), json_string_length(hay), n, strlen(n)) != NULL || !*n;
        free(n);
        return hit;
    }
    if (!js_array_for(e, hay, expr, "includes")) return 0;
    size_t i;
    json_t *x;
    json_array_foreach(hay, i, x) if (js_eq(x, needle)) return 1;
    return 0;
}

/* v.toLowerCase() for a string, else the TypeError of `expr`. */
static char *js_lower(jserr *e, json_t *v, const char *expr)
{
    if (json_is_string(v)) return mb_js_lower(json_string_value(v), json_string_length(v), NULL);
    if (!v || json_is_null(v))
        throw_type(e, mb_asprintf("Cannot read properties of %s (reading 'toLowerCase')", v ? "null" : "undefined"));
    else
        throw_type(e, mb_asprintf("%s.toLowerCase is not a function", expr));
    return NULL;
}

/* ------------------------------------------------------------- storage */

static void graph_dispose(graph *g)
{
    json_decref(g->entities);
    json_decref(g->relations);
    g->entities = g->relations = NULL;
}

/* The whole file as the older {entities, relations} JSON document? */
static int load_json_document(const char *data, size_t len, graph *g)
{
    size_t pre = mb_js_space_prefix(data, len);
    if (pre >= len || data[pre] != '{') return 0;
    json_t *doc = json_loadb(data, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(doc) || json_object_get(doc, "type") ||
        !(json_is_array(json_object_get(doc, "entities")) || json_is_array(json_object_get(doc, "relations")))) {
        json_decref(doc);
        return 0;
    }
    json_t *ents = json_object_get(doc, "entities"), *rels = json_object_get(doc, "relations");
    g->entities = json_is_array(ents) ? json_incref(ents) : json_array();
    g->relations = json_is_array(rels) ? json_incref(rels) : json_array();
    json_decref(doc);
    return 1;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void cache_drop(graph_cache *c)
{
    if (c->valid) graph_dispose(&c->g);
    c->valid = 0;
}

static int parse_graph(mem_server *m, graph *g, char **why);

/* upstream's loadGraph. A read-only caller (`shared`) gets references to the
 * cached arrays and must not change them; a changing caller takes them over. */
static int load_graph(mem_server *m, graph *g, int shared, char **why)
{
    struct stat before;
    if (stat(m->file, &before) != 0 || !S_ISREG(before.st_mode)) {
        cache_drop(&m->cache); /* missing, or not a file: parse reports it */
        return parse_graph(m, g, why);
    }
    if (!m->cache.valid || !same_file(&m->cache.st, &before)) {
        cache_drop(&m->cache);
        graph fresh;
        int rc = parse_graph(m, &fresh, why);
        if (rc) return rc;
        struct stat after;
        /* Only a parse of a file that did not change meanwhile is kept. */
        if (stat(m->file, &after) == 0 && same_file(&before, &after)) {
            m->cache.g = fresh;
            m->cache.st = before;
            m->cache.valid = 1;
        } else {
            *g = fresh;
            return 0;
        }
    }
    if (shared) {
        g->entities = json_incref(m->cache.g.entities);
        g->relations = json_incref(m->cache.g.relations);
    } else {
        /* A change: the caller takes the parse over and the file is about to
         * be rewritten (save_graph caches the new state), or the change fails
         * and the next call parses again. */
        *g = m->cache.g;
        m->cache.valid = 0;
    }
    return 0;
}

static int parse_graph(mem_server *m, graph *g, char **why)
{
    g->entities = json_array();
    g->relations = json_array();
    int fd = mb_open_file(m->file, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        *why = mb_node_fs_error(errno, "open", m->file, NULL);
        return MB_EIO;
    }
    mb_buf b = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *why = mb_node_fs_error(errno, "read", NULL, NULL);
            close(fd);
            mb_buf_free(&b);
            return MB_EIO;
        }
        if (n == 0) break;
        mb_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    size_t len;
    char *data = mb_utf8_repair(b.data ? b.data : "", b.len, &len);
    mb_buf_free(&b);
    int rc = 0;
    graph doc = {0};
    if (load_json_document(data, len, &doc)) {
        graph_dispose(g);
        *g = doc;
        free(data);
        return 0;
    }
    size_t start = 0, lineno = 0;
    for (size_t i = 0; i <= len && !rc; i++) {
        if (i < len && data[i] != '\n') continue;
        const char *line = data + start;
        size_t ll = i - start;
        start = i + 1;
        lineno++;
        size_t pre = mb_js_space_prefix(line, ll);
        if (pre == ll) continue; /* blank */
        json_error_t jerr;
        json_t *item = json_loadb(line, ll, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        if (!item) {
            *why = mb_asprintf("Unexpected token in JSON at line %zu of %s: %s", lineno, m->file, jerr.text);
            rc = MB_EINVAL;
            break;
        }
        if (json_is_null(item)) {
            *why = mb_strdup("Cannot read properties of null (reading 'type')");
            rc = MB_EINVAL;
        } else {
            const char *type = json_string_value(json_object_get(item, "type"));
            if (type && !strcmp(type, "entity")) json_array_append(g->entities, item);
            if (type && !strcmp(type, "relation")) json_array_append(g->relations, item);
        }
        json_decref(item);
    }
    free(data);
    if (rc) graph_dispose(g);
    return rc;
}

/* JSON.stringify({type: kind, ...item}) appended to b; returns that object,
 * which is what reading the line back gives. */
static json_t *put_item(mb_buf *b, const char *kind, json_t *item)
{
    json_t *o = json_pack("{s:s}", "type", kind);
    if (json_is_object(item)) {
        const char *k;
        json_t *v;
        json_object_foreach(item, k, v) json_object_set(o, k, v);
    } else if (json_is_string(item)) { /* spreading a string gives its characters */
        const char *s = json_string_value(item);
        size_t n = json_string_length(item), i = 0, idx = 0;
        while (i < n) {
            size_t st = i;
            mb_utf8_next(s, n, &i);
            char key[32];
            snprintf(key, sizeof key, "%zu", idx++);
            json_object_set_new(o, key, json_stringn(s + st, i - st));
        }
    }
    mb_js_stringify_to(b, o, 0);
    return o;
}

/* upstream's saveGraph: a plain (not atomic) rewrite, as fs.writeFile. */
static int save_graph(mem_server *m, graph *g, char **why)
{
    mb_buf b = {0};
    size_t i, n = 0;
    json_t *x;
    /* What a reload of the file gives, kept as the cache once it is written. */
    graph saved = {json_array(), json_array()};
    json_array_foreach(g->entities, i, x) {
        if (n++) mb_buf_putc(&b, '\n');
        json_array_append_new(saved.entities, put_item(&b, "entity", x));
    }
    json_array_foreach(g->relations, i, x) {
        if (n++) mb_buf_putc(&b, '\n');
        json_array_append_new(saved.relations, put_item(&b, "relation", x));
    }
    int fd = mb_open_file(m->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        *why = mb_node_fs_error(errno, "open", m->file, NULL);
        mb_buf_free(&b);
        graph_dispose(&saved);
        return MB_EIO;
    }
    const char *p = b.data ? b.data : "";
    size_t left = b.len;
    int rc = 0;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            *why = mb_node_fs_error(errno, "write", NULL, NULL);
            rc = MB_EIO;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    struct stat st;
    if (!rc && fstat(fd, &st) == 0) {
        cache_drop(&m->cache);
        m->cache.g = saved;
        m->cache.st = st;
        m->cache.valid = 1;
    } else {
        graph_dispose(&saved);
    }
    close(fd);
    mb_buf_free(&b);
    return rc;
}

/* ------------------------------------------------------------- helpers */

static int fail_free(mb_mcp_result *res, char *msg)
{
    mb_mcp_fail_str(res, msg);
    free(msg);
    return MB_MCP_FAILED;
}

static void json_text(mb_mcp_result *res, const json_t *v)
{
    char *t = mb_js_stringify(v, 2);
    mb_mcp_text(res, t);
    free(t);
}

/* Runs body(graph) between load and (if `save`) save, turning a thrown
 * TypeError or I/O error into the call's failure. */
typedef int (*op_fn)(jserr *e, graph *g, json_t *args, json_t **out);

static int run(mb_mcp_call *call, json_t *args, mb_mcp_result *res, op_fn op, int save,
               const char *done_text)
{
    mem_server *m = mb_mcp_call_data(call);
    if (!args) return mb_mcp_fail(res, "No arguments provided for tool: %s", mb_mcp_call_tool(call));
    graph g;
    char *why = NULL;
    if (load_graph(m, &g, !save, &why)) return fail_free(res, why);
    jserr e = {0};
    json_t *out = NULL;
    op(&e, &g, args, &out);
    if (e.msg) {
        json_decref(out);
        graph_dispose(&g);
        return fail_free(res, e.msg);
    }
    /* A change took the cache over in load_graph; save_graph caches what a
     * reload of the new file gives (entities read back carry their "type",
     * unlike g's new ones). */
    if (save && save_graph(m, &g, &why)) {
        json_decref(out);
        graph_dispose(&g);
        return fail_free(res, why);
    }
    if (done_text) mb_mcp_text(res, done_text);
    else json_text(res, out);
    json_decref(out);
    graph_dispose(&g);
    return 0;
}

/* Does any element of `list` have field `key` === v? (list.some(x => x.key === v)) */
static json_t *find_by(jserr *e, json_t *list, const char *key, json_t *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) {
        json_t *f = js_get(e, x, key);
        if (e->msg) return NULL;
        if (js_eq(f, v)) return x;
    }
    return NULL;
}

static int same_relation(jserr *e, json_t *a, json_t *b)
{
    json_t *af = js_get(e, a, "from"), *bf = js_get(e, b, "from");
    if (e->msg || !js_eq(af, bf)) return 0;
    json_t *at = js_get(e, a, "to"), *bt = js_get(e, b, "to");
    if (e->msg || !js_eq(at, bt)) return 0;
    json_t *ar = js_get(e, a, "relationType"), *br = js_get(e, b, "relationType");
    return !e->msg && js_eq(ar, br);
}

/* --------------------------------------------------------------- tools */

static int op_create_entities(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *ents = js_array_for(e, json_object_get(args, "entities"), "entities", "filter");
    if (!ents) return 0;
    json_t *fresh = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(ents, i, x) {
        int exists = 0;
        size_t k;
        json_t *y;
        json_array_foreach(g->entities, k, y) {
            json_t *yn = js_get(e, y, "name"), *xn = js_get(e, x, "name");
            if (e->msg) break;
            if (js_eq(yn, xn)) {
                exists = 1;
                break;
            }
        }
        if (e->msg) break;
        if (!exists) json_array_append(fresh, x);
    }
    if (!e->msg) json_array_extend(g->entities, fresh);
    *out = fresh;
    return 0;
}

static int op_create_relations(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *rels = js_array_for(e, json_object_get(args, "relations"), "relations", "filter");
    if (!rels) return 0;
    json_t *fresh = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rels, i, r) {
        int exists = 0;
        size_t k;
        json_t *y;
        json_array_foreach(g->relations, k, y) if (same_relation(e, y, r) || e->msg) {
            exists = 1;
            break;
        }
        if (e->msg) break;
        if (!exists) json_array_append(fresh, r);
    }
    if (!e->msg) json_array_extend(g->relations, fresh);
    *out = fresh;
    return 0;
}

static int op_add_observations(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *obs = js_array_for(e, json_object_get(args, "observations"), "observations", "map");
    if (!obs) return 0;
    json_t *results = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(obs, i, o) {
        json_t *name = js_get(e, o, "entityName");
        if (e->msg) break;
        json_t *ent = find_by(e, g->entities, "name", name);
        if (e->msg) break;
        if (!ent) {
            char *s = js_string_of(name);
            throw_type(e, mb_asprintf("Entity with name %s not found", s));
            free(s);
            break;
        }
        json_t *contents = js_array_for(e, js_get(e, o, "contents"), "o.contents", "filter");
        if (!contents) break;
        json_t *have = js_get(e, ent, "observations");
        json_t *added = json_array();
        size_t k;
        json_t *c;
        json_array_foreach(contents, k, c) {
            if (!js_includes(e, have, "entity.observations", c)) json_array_append(added, c);
            if (e->msg) break;
        }
        /* entity.observations.push(...added) runs even when nothing is new */
        if (!e->msg && js_array_for(e, have, "entity.observations", "push")) json_array_extend(have, added);
        if (e->msg) {
            json_decref(added);
            break;
        }
        json_t *r = json_object();
        if (name) json_object_set(r, "entityName", name);
        json_object_set_new(r, "addedObservations", added);
        json_array_append_new(results, r);
    }
    *out = results;
    return 0;
}

static int op_delete_entities(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *names = json_object_get(args, "entityNames");
    json_t *keep = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(g->entities, i, x) {
        json_t *n = js_get(e, x, "name");
        if (e->msg || js_includes(e, names, "entityNames", n)) {
            if (e->msg) break;
            continue;
        }
        json_array_append(keep, x);
    }
    json_t *keep_r = json_array();
    json_array_foreach(g->relations, i, x) {
        if (e->msg) break;
        json_t *f = js_get(e, x, "from");
        if (e->msg || js_includes(e, names, "entityNames", f)) continue;
        json_t *t = js_get(e, x, "to");
        if (e->msg || js_includes(e, names, "entityNames", t)) continue;
        json_array_append(keep_r, x);
    }
    json_decref(g->entities);
    json_decref(g->relations);
    g->entities = keep;
    g->relations = keep_r;
    (void)out;
    return 0;
}

static int op_delete_observations(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *dels = js_array_for(e, json_object_get(args, "deletions"), "deletions", "forEach");
    if (!dels) return 0;
    size_t i;
    json_t *d;
    json_array_foreach(dels, i, d) {
        json_t *name = js_get(e, d, "entityName");
        if (e->msg) break;
        json_t *ent = find_by(e, g->entities, "name", name);
        if (e->msg) break;
        if (!ent) continue;
        json_t *have = js_array_for(e, js_get(e, ent, "observations"), "entity.observations", "filter");
        if (!have) break;
        json_t *drop = js_get(e, d, "observations");
        json_t *kept = json_array();
        size_t k;
        json_t *o;
        json_array_foreach(have, k, o) {
            if (!js_includes(e, drop, "d.observations", o)) json_array_append(kept, o);
            if (e->msg) break;
        }
        if (e->msg) {
            json_decref(kept);
            break;
        }
        json_object_set_new(ent, "observations", kept);
    }
    (void)out;
    return 0;
}

static int op_delete_relations(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *dels = json_object_get(args, "relations");
    json_t *keep = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(g->relations, i, r) {
        if (!js_array_for(e, dels, "relations", "some")) break;
        int hit = 0;
        size_t k;
        json_t *d;
        json_array_foreach(dels, k, d) if (same_relation(e, r, d) || e->msg) {
            hit = 1;
            break;
        }
        if (e->msg) break;
        if (!hit) json_array_append(keep, r);
    }
    json_decref(g->relations);
    g->relations = keep;
    (void)out;
    return 0;
}

/* Relations whose both ends are among the entities kept in `ents`. */
/* The entities' names as a set under js_eq: string names in a jansson
 * object (O(1) lookups), any other value in a list compared one by one. */
typedef struct name_set {
    json_t *strings; /* object: name -> true */
    json_t *others;  /* array */
    int undefined;   /* an entity without a name (undefined === undefined) */
} name_set;

static void name_set_init(name_set *ns, json_t *ents)
{
    ns->strings = json_object();
    ns->others = json_array();
    ns->undefined = 0;
    size_t k;
    json_t *x;
    json_array_foreach(ents, k, x) {
        json_t *n = json_object_get(x, "name");
        if (json_is_string(n))
            json_object_setn_nocheck(ns->strings, json_string_value(n), json_string_length(n),
                                     json_true());
        else if (n)
            json_array_append(ns->others, n);
        else
            ns->undefined = 1;
    }
}

static int name_set_has(const name_set *ns, json_t *v)
{
    if (!v) return ns->undefined;
    if (json_is_string(v))
        return json_object_getn(ns->strings, json_string_value(v), json_string_length(v)) != NULL;
    size_t k;
    json_t *x;
    json_array_foreach(ns->others, k, x) if (js_eq(x, v)) return 1;
    return 0;
}

static json_t *relations_between(jserr *e, graph *g, json_t *ents)
{
    json_t *rels = json_array();
    name_set ns;
    name_set_init(&ns, ents);
    size_t i;
    json_t *r;
    json_array_foreach(g->relations, i, r) {
        json_t *f = js_get(e, r, "from"), *t = js_get(e, r, "to");
        if (e->msg) break;
        if (name_set_has(&ns, f) && name_set_has(&ns, t)) json_array_append(rels, r);
    }
    json_decref(ns.strings);
    json_decref(ns.others);
    return rels;
}

static int contains_lower(jserr *e, json_t *v, const char *expr, const char *q)
{
    char *s = js_lower(e, v, expr);
    if (!s) return 0;
    int hit = strstr(s, q) != NULL;
    free(s);
    return hit;
}

static int op_search_nodes(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *query = json_object_get(args, "query");
    json_t *ents = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(g->entities, i, x) {
        char *q = NULL;
        json_t *name = js_get(e, x, "name");
        char *ln = e->msg ? NULL : js_lower(e, name, "e.name");
        if (ln) q = js_lower(e, query, "query");
        int hit = ln && q && strstr(ln, q);
        free(ln);
        if (!hit && !e->msg) hit = contains_lower(e, js_get(e, x, "entityType"), "e.entityType", q);
        if (!hit && !e->msg) {
            json_t *obs = js_array_for(e, js_get(e, x, "observations"), "e.observations", "some");
            size_t k;
            json_t *o;
            json_array_foreach(obs, k, o) {
                if (contains_lower(e, o, "o", q)) {
                    hit = 1;
                    break;
                }
                if (e->msg) break;
            }
        }
        free(q);
        if (e->msg) break;
        if (hit) json_array_append(ents, x);
    }
    json_t *rels = e->msg ? json_array() : relations_between(e, g, ents);
    *out = json_pack("{s:o, s:o}", "entities", ents, "relations", rels);
    return 0;
}

static int op_open_nodes(jserr *e, graph *g, json_t *args, json_t **out)
{
    json_t *names = json_object_get(args, "names");
    json_t *ents = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(g->entities, i, x) {
        json_t *n = js_get(e, x, "name");
        if (e->msg) break;
        if (js_includes(e, names, "names", n)) json_array_append(ents, x);
        if (e->msg) break;
    }
    json_t *rels = e->msg ? json_array() : relations_between(e, g, ents);
    *out = json_pack("{s:o, s:o}", "entities", ents, "relations", rels);
    return 0;
}

static int op_read_graph(jserr *e, graph *g, json_t *args, json_t **out)
{
    (void)e;
    (void)args;
    *out = json_pack("{s:O, s:O}", "entities", g->entities, "relations", g->relations);
    return 0;
}

static int t_create_entities(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return run(c, a, r, op_create_entities, 1, NULL); }
static int t_create_relations(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return run(c, a, r, op_create_relations, 1, NULL); }
static int t_add_observations(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return run(c, a, r, op_add_observations, 1, NULL); }
static int t_delete_entities(mb_mcp_call *c, json_t *a, mb_mcp_result *r)
{
    return run(c, a, r, op_delete_entities, 1, "Entities deleted successfully");
}
static int t_delete_observations(mb_mcp_call *c, json_t *a, mb_mcp_result *r)
{
    return run(c, a, r, op_delete_observations, 1, "Observations deleted successfully");
}
static int t_delete_relations(mb_mcp_call *c, json_t *a, mb_mcp_result *r)
{
    return run(c, a, r, op_delete_relations, 1, "Relations deleted successfully");
}
static int t_search_nodes(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return run(c, a, r, op_search_nodes, 0, NULL); }
static int t_open_nodes(mb_mcp_call *c, json_t *a, mb_mcp_result *r) { return run(c, a, r, op_open_nodes, 0, NULL); }
static int t_read_graph(mb_mcp_call *c, json_t *a, mb_mcp_result *r)
{
    mem_server *m = mb_mcp_call_data(c);
    /* 2025.8.4 runs read_graph before its "No arguments provided" check */
    json_t *empty = m->v->read_graph_without_args ? json_object() : NULL;
    int rc = run(c, a ? a : empty, r, op_read_graph, 0, NULL);
    json_decref(empty);
    return rc;
}

static int t_unknown(mb_mcp_call *c, json_t *a, mb_mcp_result *r)
{
    if (!a) return mb_mcp_fail(r, "No arguments provided for tool: %s", mb_mcp_call_tool(c));
    return mb_mcp_fail(r, "Unknown tool: %s", mb_mcp_call_tool(c));
}

/* upstream's tools/list, verbatim */
static const mb_mcp_tool mem_tools[] = {
    {.name = "create_entities",
     .description = "Create multiple new entities in the knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"entities\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
     "\"description\":\"The name of the entity\"},\"entityType\":{\"type\":\"string\","
     "\"description\":\"The type of the entity\"},\"observations\":{\"type\":\"array\","
     "\"items\":{\"type\":\"string\"},\"description\":\"An array of observation contents "
     "associated with the entity\"}},\"required\":[\"name\",\"entityType\","
     "\"observations\"]}}},\"required\":[\"entities\"]}",
     .fn = t_create_entities},
    {.name = "create_relations",
     .description = "Create multiple new relations between entities in the knowledge graph. Relations "
     "should be in active voice",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"relations\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"from\":{\"type\":\"string\","
     "\"description\":\"The name of the entity where the relation starts\"},"
     "\"to\":{\"type\":\"string\",\"description\":\"The name of the entity where the "
     "relation ends\"},\"relationType\":{\"type\":\"string\",\"description\":\"The type of "
     "the relation\"}},\"required\":[\"from\",\"to\",\"relationType\"]}}},"
     "\"required\":[\"relations\"]}",
     .fn = t_create_relations},
    {.name = "add_observations",
     .description = "Add new observations to existing entities in the knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"observations\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"entityName\":{\"type\":\"string\","
     "\"description\":\"The name of the entity to add the observations to\"},"
     "\"contents\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"An "
     "array of observation contents to add\"}},\"required\":[\"entityName\","
     "\"contents\"]}}},\"required\":[\"observations\"]}",
     .fn = t_add_observations},
    {.name = "delete_entities",
     .description = "Delete multiple entities and their associated relations from the knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"entityNames\":{\"type\":\"array\","
     "\"items\":{\"type\":\"string\"},\"description\":\"An array of entity names to "
     "delete\"}},\"required\":[\"entityNames\"]}",
     .fn = t_delete_entities},
    {.name = "delete_observations",
     .description = "Delete specific observations from entities in the knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"deletions\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"entityName\":{\"type\":\"string\","
     "\"description\":\"The name of the entity containing the observations\"},"
     "\"observations\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
     "\"description\":\"An array of observations to delete\"}},\"required\":[\"entityName\","
     "\"observations\"]}}},\"required\":[\"deletions\"]}",
     .fn = t_delete_observations},
    {.name = "delete_relations",
     .description = "Delete multiple relations from the knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"relations\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"from\":{\"type\":\"string\","
     "\"description\":\"The name of the entity where the relation starts\"},"
     "\"to\":{\"type\":\"string\",\"description\":\"The name of the entity where the "
     "relation ends\"},\"relationType\":{\"type\":\"string\",\"description\":\"The type of "
     "the relation\"}},\"required\":[\"from\",\"to\",\"relationType\"]},"
     "\"description\":\"An array of relations to delete\"}},\"required\":[\"relations\"]}",
     .fn = t_delete_relations},
    {.name = "read_graph",
     .description = "Read the entire knowledge graph",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{}}",
     .fn = t_read_graph},
    {.name = "search_nodes",
     .description = "Search for nodes in the knowledge graph based on a query",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\","
     "\"description\":\"The search query to match against entity names, types, and "
     "observation content\"}},\"required\":[\"query\"]}",
     .fn = t_search_nodes},
    {.name = "open_nodes",
     .description = "Open specific nodes in the knowledge graph by their names",
     .input_schema =
     "{\"type\":\"object\",\"properties\":{\"names\":{\"type\":\"array\","
     "\"items\":{\"type\":\"string\"},\"description\":\"An array of entity names to "
     "retrieve\"}},\"required\":[\"names\"]}",
     .fn = t_open_nodes},
    {0},
};

static const mb_mcp_info mem_info = {
    .name = "memory-server",
    .version = "0.6.3",
    .flavor = MB_MCP_TS_SERVER,
    .capabilities = "{\"tools\":{}}", /* as upstream: no logging */
    .unknown_tool = t_unknown,
    .max_protocol = "2024-11-05", /* both versions pin TypeScript SDK 1.0.1 */
};

/* -------------------------------------------------------------- start */

static void mem_free(void *p)
{
    mem_server *m = p;
    if (!m) return;
    cache_drop(&m->cache);
    free(m->file);
    free(m);
}

/* The directory holding the running binary (upstream: the script's). */
static char *program_dir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return mb_strdup(".");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == exe) return mb_strdup("/");
    if (slash) *slash = '\0';
    return mb_strdup(exe);
}

/* upstream's MEMORY_FILE_PATH rule */
static char *memory_path(const char *setting)
{
    char *dir = program_dir();
    char *r;
    if (!setting || !*setting) r = mb_asprintf("%s/memory.json", dir);
    else if (setting[0] == '/') r = mb_strdup(setting);
    else r = mb_path_resolve(dir, setting);
    free(dir);
    return r;
}

int mb_srv_memory_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {{"memory-file", required_argument, NULL, 'f'},
                                         {"upstream-version", required_argument, NULL, 'v'},
                                         {NULL, 0, NULL, 0}};
    const char *file = getenv("MEMORY_FILE_PATH");
    const mem_version *v = &MEM_VERSIONS[0];
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'f') {
            file = optarg;
        } else if (c == 'v') {
            v = NULL;
            for (size_t i = 0; i < sizeof MEM_VERSIONS / sizeof MEM_VERSIONS[0]; i++)
                if (!strcmp(optarg, MEM_VERSIONS[i].name)) v = &MEM_VERSIONS[i];
            if (!v)
                return mb_err_set(err, MB_EINVAL,
                                  "unknown --upstream-version \"%s\" (use 2025.8.4 or 2025.4.25)", optarg);
        } else {
            return mb_err_set(err, MB_EINVAL, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return mb_err_set(err, MB_EINVAL, "unexpected argument '%s'", argv[optind]);
    mem_server *m = mb_calloc(1, sizeof *m);
    m->v = v;
    m->file = memory_path(file);
    return mb_mcp_server_new_with_tools(&mem_info, mem_tools, m, mem_free, out, err);
}
