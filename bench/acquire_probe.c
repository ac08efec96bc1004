/*
 * acquire_probe.c - P1's client in C: acquire a sandbox and probe every one
 * of its servers, so that the figure is mcpbox's and not the client's.
 *
 *   acquire_probe --url BASE --key KEY --body JSON [--n N] [--warmup W]
 *                 [--wait NAME]... [--timeout S] [--keep 1]
 *
 * Each of the W + N iterations: POST BASE/local-sandbox with --body (timed:
 * "POST alone"), then, for every server of the answer (or only those named
 * by --wait), concurrently, one whole MCP session as a client checking its
 * servers opens one: initialize, notifications/initialized, tools/list,
 * every answer checked (HTTP 200, a session id, a non-empty tools list); a
 * server answering 503 (still starting) is asked again until --timeout.
 * "ready" is the time from the POST until the last tools/list answered.
 * Then, untimed, the sessions are closed (DELETE) and the sandbox released;
 * with --keep 1 both are left (to measure the acquire's own CPU: the caller
 * releases the sandboxes afterwards).
 *
 * One thread per server slot, each with its own keep-alive connection
 * (libcurl easy handle) kept over the iterations; the POST has its own. Only
 * the slots of the iteration's servers are woken (a semaphore each), so the
 * client's own cost does not grow with the threads it keeps. The
 * first W iterations are the warm-up. Output, one JSON object on stdout:
 *   {"n":N,"errors":N,"first_error":"..","cpu_s":..,
 *    "post_ms":[...],"ready_ms":[...]}
 * cpu_s is this process's CPU time over the run (the client's own cost).
 * Exit 0 without errors, 1 with, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_SERVERS 32

typedef struct resp {
    long status;
    char *body;
    size_t len, cap;
    char sid[256];
} resp;

typedef struct slot {
    pthread_t th;
    CURL *c;
    char url[1024];
    char name[128];
    int active; /* probed in this iteration */
    sem_t go;   /* posted to run one iteration (or to quit) */
    int ok;
    char err[512];
    char sid[256];
} slot;

static struct {
    const char *base, *key, *body;
    int n, warmup, keep;
    double timeout;
    const char *wait[MAX_SERVERS];
    int nwait;
    slot slots[MAX_SERVERS];
    int nslots;
    sem_t done; /* posted by each active slot at the end of its iteration */
    int quit;
} G;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    resp *r = ud;
    size_t k = sz * n;
    if (r->len + k + 1 > r->cap) { /* one allocation for most bodies */
        r->cap = r->len + k + 1 > 16384 ? 2 * (r->len + k + 1) : 16384;
        r->body = realloc(r->body, r->cap);
        if (!r->body) abort();
    }
    memcpy(r->body + r->len, p, k);
    r->len += k;
    r->body[r->len] = '\0';
    return k;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    resp *r = ud;
    size_t k = sz * n;
    static const char h[] = "mcp-session-id:";
    if (k > sizeof h - 1 && !strncasecmp(p, h, sizeof h - 1)) {
        const char *v = p + sizeof h - 1;
        size_t vl = k - (sizeof h - 1);
        while (vl && (*v == ' ' || *v == '\t')) v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ')) vl--;
        if (vl >= sizeof r->sid) vl = sizeof r->sid - 1;
        memcpy(r->sid, v, vl);
        r->sid[vl] = '\0';
    }
    return k;
}

/* One request on handle c; 0 or -1 (transport error, message in err). */
static int http(CURL *c, const char *method, const char *url, const char *body,
                const char *sid, resp *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct curl_slist *hs = NULL;
    char line[400];
    hs = curl_slist_append(hs, "Content-Type: application/json");
    hs = curl_slist_append(hs, "Accept: application/json, text/event-stream");
    if (G.key) {
        snprintf(line, sizeof line, "Authorization: Bearer %s", G.key);
        hs = curl_slist_append(hs, line);
    }
    if (sid && *sid) {
        snprintf(line, sizeof line, "Mcp-Session-Id: %s", sid);
        hs = curl_slist_append(hs, line);
        hs = curl_slist_append(hs, "MCP-Protocol-Version: 2025-06-18");
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
    if (!body) curl_easy_setopt(c, CURLOPT_POST, 0L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(G.timeout * 1000));
    CURLcode cc = curl_easy_perform(c);
    curl_slist_free_all(hs);
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, url, curl_easy_strerror(cc));
        return -1;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    if (!r->body) r->body = calloc(1, 1);
    return 0;
}

/* One MCP request whose answer must be HTTP 200 and hold `want`; a 503 (the
 * server still starting) is retried until the deadline. */
static int mcp(slot *s, const char *msg, const char *want, double deadline, resp *r)
{
    for (;;) {
        if (http(s->c, "POST", s->url, msg, s->sid, r, s->err, sizeof s->err)) return -1;
        if (r->status == 503 && now_ms() < deadline) {
            free(r->body);
            usleep(2000);
            continue;
        }
        if (r->status != 200 || (want && !strstr(r->body, want))) {
            snprintf(s->err, sizeof s->err, "%s: HTTP %ld: %.300s", s->name, r->status, r->body);
            free(r->body);
            return -1;
        }
        return 0;
    }
}

static void probe(slot *s)
{
    double deadline = now_ms() + G.timeout * 1000;
    resp r;
    s->ok = 0;
    s->sid[0] = '\0';
    if (mcp(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
               "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
               "{\"name\":\"acquire_probe\",\"version\":\"1\"}}}",
            "\"serverInfo\"", deadline, &r))
        return;
    snprintf(s->sid, sizeof s->sid, "%s", r.sid);
    free(r.body);
    if (!s->sid[0]) {
        snprintf(s->err, sizeof s->err, "%s: initialize gave no Mcp-Session-Id", s->name);
        return;
    }
    if (http(s->c, "POST", s->url, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
             s->sid, &r, s->err, sizeof s->err))
        return;
    free(r.body);
    if (r.status != 202 && r.status != 200) {
        snprintf(s->err, sizeof s->err, "%s: initialized: HTTP %ld", s->name, r.status);
        return;
    }
    if (mcp(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{}}",
            "\"inputSchema\"", deadline, &r))
        return;
    free(r.body);
    s->ok = 1;
}

static void *slot_main(void *arg)
{
    slot *s = arg;
    for (;;) {
        while (sem_wait(&s->go) != 0) {}
        if (G.quit) return NULL;
        probe(s);
        sem_post(&G.done);
    }
}

static void print_list(const char *key, double *v, int n)
{
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) printf("%s%.3f", i ? "," : "", v[i]);
    printf("]");
}

static int waited(const char *name)
{
    if (!G.nwait) return 1;
    for (int i = 0; i < G.nwait; i++)
        if (!strcmp(G.wait[i], name)) return 1;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: acquire_probe --url BASE --key KEY --body JSON [--n N] [--warmup W]\n"
                    "                     [--wait NAME]... [--timeout S] [--keep 1]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    G.n = 20;
    G.warmup = 2;
    G.timeout = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(a, "--url")) G.base = v;
        else if (!strcmp(a, "--key")) G.key = v;
        else if (!strcmp(a, "--body")) G.body = v;
        else if (!strcmp(a, "--n")) G.n = atoi(v);
        else if (!strcmp(a, "--warmup")) G.warmup = atoi(v);
        else if (!strcmp(a, "--timeout")) G.timeout = atof(v);
        else if (!strcmp(a, "--keep")) G.keep = atoi(v);
        else if (!strcmp(a, "--wait") && G.nwait < MAX_SERVERS) G.wait[G.nwait++] = v;
        else usage();
        i++;
    }
    if (!G.base || !G.body || G.n < 1 || G.warmup < 0) usage();
    /* CURLOPT_NOSIGNAL: libcurl does not swap the SIGPIPE handler around
     * every request (two system calls each); a closed connection's SIGPIPE
     * is ignored here instead. */
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    sem_init(&G.done, 0, 0);
    for (int i = 0; i < MAX_SERVERS; i++) {
        sem_init(&G.slots[i].go, 0, 0);
        G.slots[i].c = curl_easy_init();
        curl_easy_setopt(G.slots[i].c, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(G.slots[i].c, CURLOPT_NOSIGNAL, 1L);
        if (pthread_create(&G.slots[i].th, NULL, slot_main, &G.slots[i])) abort();
    }
    CURL *api = curl_easy_init();
    curl_easy_setopt(api, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(api, CURLOPT_NOSIGNAL, 1L);
    char url[1024], err[512] = "", first[600] = "";
    snprintf(url, sizeof url, "%s/local-sandbox", G.base);
    double *post = calloc((size_t)G.n, sizeof *post), *ready = calloc((size_t)G.n, sizeof *ready);
    int kept = 0, errors = 0;
    for (int it = 0; it < G.warmup + G.n; it++) {
        resp r;
        double t0 = now_ms();
        if (http(api, "POST", url, G.body, NULL, &r, err, sizeof err)) {
            errors++;
            if (!*first) snprintf(first, sizeof first, "%s", err);
            continue;
        }
        double t_post = now_ms() - t0;
        json_t *j = r.status == 201 || r.status == 200 ? json_loads(r.body, 0, NULL) : NULL;
        json_t *servers = json_object_get(j, "servers");
        const char *sbid = json_string_value(json_object_get(j, "local_sandbox_id"));
        if (!json_is_array(servers) || !sbid) {
            errors++;
            if (!*first) snprintf(first, sizeof first, "POST: HTTP %ld: %.300s", r.status, r.body);
            free(r.body);
            json_decref(j);
            continue;
        }
        free(r.body);
        char sandbox[128];
        snprintf(sandbox, sizeof sandbox, "%s", sbid);
        G.nslots = 0;
        for (int i = 0; i < MAX_SERVERS; i++) G.slots[i].active = 0;
        size_t k;
        json_t *s;
        json_array_foreach(servers, k, s) {
            const char *name = json_string_value(json_object_get(s, "server_name"));
            const char *su = json_string_value(json_object_get(s, "mcp_server_url"));
            if (!name || !su || !waited(name) || G.nslots >= MAX_SERVERS) continue;
            slot *sl = &G.slots[G.nslots++];
            snprintf(sl->url, sizeof sl->url, "%s", su);
            snprintf(sl->name, sizeof sl->name, "%s", name);
            sl->active = 1;
        }
        json_decref(j);
        for (int i = 0; i < G.nslots; i++) sem_post(&G.slots[i].go);
        for (int i = 0; i < G.nslots; i++)
            while (sem_wait(&G.done) != 0) {}
        double t_ready = now_ms() - t0;
        int bad = 0;
        for (int i = 0; i < G.nslots; i++)
            if (!G.slots[i].ok) {
                bad = 1;
                if (!*first) snprintf(first, sizeof first, "%s", G.slots[i].err);
            }
        if (G.nwait && G.nslots != G.nwait) {
            bad = 1;
            if (!*first) snprintf(first, sizeof first, "the answer lists %d of the %d servers waited on",
                                  G.nslots, G.nwait);
        }
        /* untimed: close the sessions, release the sandbox */
        for (int i = 0; !G.keep && i < G.nslots; i++)
            if (G.slots[i].sid[0] &&
                !http(G.slots[i].c, "DELETE", G.slots[i].url, NULL, G.slots[i].sid, &r, err, sizeof err))
                free(r.body);
        char del[1200];
        snprintf(del, sizeof del, "%s/local-sandbox/%s", G.base, sandbox);
        if (!G.keep && !http(api, "DELETE", del, NULL, NULL, &r, err, sizeof err)) free(r.body);
        if (bad) {
            errors++;
            continue;
        }
        if (it >= G.warmup) {
            post[kept] = t_post;
            ready[kept] = t_ready;
            kept++;
        }
    }
    G.quit = 1;
    for (int i = 0; i < MAX_SERVERS; i++) sem_post(&G.slots[i].go);
    for (int i = 0; i < MAX_SERVERS; i++) {
        pthread_join(G.slots[i].th, NULL);
        curl_easy_cleanup(G.slots[i].c);
    }
    curl_easy_cleanup(api);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    json_t *fe = json_string(first);
    char *fes = json_dumps(fe, JSON_ENCODE_ANY);
    printf("{\"n\":%d,\"errors\":%d,\"first_error\":%s,\"cpu_s\":%.4f,", kept, errors, fes,
           ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    print_list("post_ms", post, kept);
    printf(",");
    print_list("ready_ms", ready, kept);
    printf("}\n");
    free(fes);
    json_decref(fe);
    free(post);
    free(ready);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
