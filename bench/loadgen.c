/*
 * loadgen.c - the HTTP load generator of bench/: many concurrent keep-alive
 * clients on one libcurl multi handle, checking every answer.
 *
 *   loadgen --url URL [--mode get|mcp|mcp-per-call] [--sessions N]
 *           [--duration S | --requests N] [--warmup S | --warmup-requests N]
 *           [--body JSON | --bodies FILE] [--answers FILE]
 *           [--expect STR]... [--expect-count STR=N] [--reject STR]...
 *           [--header 'Name: value']... [--timeout S] [--windows N]
 *
 * Modes:
 *   get           GET URL over and over (a trivial endpoint: the ceiling of
 *                 this generator on this machine).
 *   mcp           each session opens an MCP session (initialize, then
 *                 notifications/initialized) and then POSTs --body (a JSON-RPC
 *                 request; "%ID%" is replaced by a fresh id) over and over.
 *                 The handshake is not timed.
 *   mcp-per-call  each iteration is a whole MCP session, as MCP-Atlas's client
 *                 does for every tool call: initialize, initialized, the
 *                 call, DELETE; the iteration is timed as one.
 *
 * Per-call bodies: --bodies FILE holds one JSON-RPC request per line; the
 * calls of the run are numbered 0, 1, 2... in the order they are sent (over
 * all sessions) and call k sends line k (modulo the number of lines), so a
 * sequence of different calls (e.g. creating entity k) is replayed exactly.
 * --warmup-requests N makes the first N calls the warm-up instead of --warmup
 * seconds (with one session, two runs with the same file then time the same
 * calls). --answers FILE writes every call's answer body, in the order the
 * answers arrive, as records "CALL TIMED LENGTH\n" + LENGTH bytes + "\n",
 * for a caller that checks whole answers after the run.
 *
 * An answer counts as correct when its status is 2xx, it holds every
 * --expect string, --expect-count STR occurs exactly N times, and no
 * --reject string occurs. Anything else is an error (the first one is
 * printed). Latencies of calls that start after the warm-up and end before
 * the deadline are kept. --windows N measures N consecutive windows of
 * --duration each after one warm-up (runs without reopening sessions); the
 * result is one JSON object on stdout:
 *   {"errors":N,"sessions":N,"cpu_s":..,"first_error":"..",
 *    "windows":[{"requests":N,"p50_ms":..,"p99_ms":..,"max_ms":..,
 *                "throughput":req_per_s,"seconds":..},...],
 *    "requests":N,"p50_ms":.. (the same over all windows)}
 * cpu_s is this process's CPU time over the whole run (warm-up included): well
 * under one core-second per second means the generator was not the limit.
 * Exit status 0 when there were no errors, 1 otherwise, 2 on bad usage.
 *
 * libcurl rather than wrk: an MCP session is per client state (the
 * Mcp-Session-Id from initialize, a handshake before the first call), which
 * wrk's Lua hooks can only keep per thread, not per connection; and every
 * answer is checked here in C, off the timed path's critical section.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

enum mode { MODE_GET, MODE_MCP, MODE_PER_CALL };
enum step { ST_INIT, ST_NOTIFY, ST_CALL, ST_DELETE };

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

typedef struct opts {
    const char *url;
    enum mode mode;
    int sessions;
    double duration, warmup, timeout;
    int windows;
    long requests;
    long warmup_requests; /* -1: the warm-up is --warmup seconds */
    const char *body;
    const char *bodies_path, *answers_path;
    const char *expect[16];
    int n_expect;
    const char *reject[16];
    int n_reject;
    const char *count_str;
    long count_n;
    struct curl_slist *extra;
} opts;

typedef struct sess {
    CURL *h;
    enum step step;
    char sid[160];
    struct curl_slist *hdrs;
    buf body, sent;
    double t_iter;  /* start of the timed unit */
    long next_id;
    long call_no;  /* the run's number of the call in flight */
    int was_ready; /* opened its session once */
} sess;

/* The run's sequence of calls: per-call bodies and where answers go. */
typedef struct plan {
    char **bodies; /* --bodies lines, or NULL: every call sends --body */
    size_t n_bodies;
    long next_call;
    FILE *answers;
} plan;

typedef struct stats {
    double *lat;   /* ms */
    double *start; /* when each timed call started */
    size_t n, cap;
    long errors;
    char first_error[512];
} stats;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void buf_add(buf *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    buf_add(ud, p, sz * nm);
    return sz * nm;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
    sess *s = ud;
    size_t n = sz * nm;
    static const char key[] = "mcp-session-id:";
    if (n > sizeof key - 1 && !strncasecmp(p, key, sizeof key - 1)) {
        const char *v = p + sizeof key - 1;
        size_t vn = n - (sizeof key - 1);
        while (vn && (*v == ' ' || *v == '\t')) v++, vn--;
        while (vn && (v[vn - 1] == '\r' || v[vn - 1] == '\n' || v[vn - 1] == ' ')) vn--;
        if (vn >= sizeof s->sid) vn = sizeof s->sid - 1;
        memcpy(s->sid, v, vn);
        s->sid[vn] = '\0';
    }
    return n;
}

static void fail(stats *st, const char *fmt, ...)
{
    st->errors++;
    if (st->first_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->first_error, sizeof st->first_error, fmt, ap);
    va_end(ap);
    for (char *c = st->first_error; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = ' ';
}

static long count_of(const char *hay, const char *needle)
{
    long n = 0;
    size_t len = strlen(needle);
    for (const char *p = hay; (p = strstr(p, needle)); p += len) n++;
    return n;
}

/* Replaces every "%ID%" of the template with id. */
static void render(buf *out, const char *tpl, long id)
{
    out->n = 0;
    char num[32];
    int nn = snprintf(num, sizeof num, "%ld", id);
    for (const char *p = tpl;;) {
        const char *q = strstr(p, "%ID%");
        if (!q) {
            buf_add(out, p, strlen(p));
            break;
        }
        buf_add(out, p, (size_t)(q - p));
        buf_add(out, num, (size_t)nn);
        p = q + 4;
    }
}

static const char INIT_BODY[] =
    "{\"jsonrpc\":\"2.0\",\"id\":%ID%,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"mcpbox-loadgen\",\"version\":\"1\"}}}";
static const char NOTIFY_BODY[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* Reads --bodies: one request per non-empty line. */
static int load_bodies(const char *path, plan *pl)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (!len) continue;
        pl->bodies = realloc(pl->bodies, (pl->n_bodies + 1) * sizeof *pl->bodies);
        if (!pl->bodies) abort();
        pl->bodies[pl->n_bodies++] = strdup(line);
    }
    free(line);
    fclose(f);
    if (!pl->n_bodies) {
        fprintf(stderr, "loadgen: %s holds no request\n", path);
        return -1;
    }
    return 0;
}

/* Prepares s->h for its current step. */
static void setup(const opts *o, plan *pl, sess *s)
{
    curl_easy_reset(s->h);
    s->body.n = 0;
    curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
    curl_easy_setopt(s->h, CURLOPT_URL, o->url);
    curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &s->body);
    curl_easy_setopt(s->h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(s->h, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(s->h, CURLOPT_TIMEOUT_MS, (long)(o->timeout * 1000));
    curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(s->h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    for (struct curl_slist *e = o->extra; e; e = e->next)
        s->hdrs = curl_slist_append(s->hdrs, e->data);
    if (o->mode == MODE_GET) {
        curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
        return;
    }
    s->hdrs = curl_slist_append(s->hdrs, "Content-Type: application/json");
    s->hdrs = curl_slist_append(s->hdrs, "Accept: application/json, text/event-stream");
    s->hdrs = curl_slist_append(s->hdrs, "Expect:");
    if (s->step != ST_INIT) {
        char h[200];
        snprintf(h, sizeof h, "Mcp-Session-Id: %s", s->sid);
        s->hdrs = curl_slist_append(s->hdrs, h);
        s->hdrs = curl_slist_append(s->hdrs, "MCP-Protocol-Version: 2025-06-18");
    }
    curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
    if (s->step == ST_DELETE) {
        curl_easy_setopt(s->h, CURLOPT_CUSTOMREQUEST, "DELETE");
        return;
    }
    if (s->step == ST_INIT) s->sid[0] = '\0';
    const char *tpl = s->step == ST_INIT ? INIT_BODY : s->step == ST_NOTIFY ? NOTIFY_BODY : o->body;
    if (s->step == ST_CALL) {
        s->call_no = pl->next_call++;
        if (pl->bodies) tpl = pl->bodies[(size_t)s->call_no % pl->n_bodies];
    }
    render(&s->sent, tpl, ++s->next_id);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->sent.p);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)s->sent.n);
}

/* Whether a finished call's answer is right; counts the error if not. */
static int check(const opts *o, sess *s, CURLcode rc, stats *st)
{
    long status = 0;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    const char *what = s->step == ST_INIT     ? "initialize"
                       : s->step == ST_NOTIFY ? "notifications/initialized"
                       : s->step == ST_DELETE ? "DELETE"
                                              : "call";
    if (rc != CURLE_OK) {
        fail(st, "%s: %s", what, curl_easy_strerror(rc));
        return 0;
    }
    if (status < 200 || status > 299) {
        fail(st, "%s: HTTP %ld: %.200s", what, status, s->body.p ? s->body.p : "");
        return 0;
    }
    const char *b = s->body.p ? s->body.p : "";
    if (s->step == ST_INIT) {
        if (!s->sid[0]) {
            fail(st, "initialize: no Mcp-Session-Id in the answer");
            return 0;
        }
        if (!strstr(b, "\"protocolVersion\"")) {
            fail(st, "initialize: no InitializeResult: %.200s", b);
            return 0;
        }
        return 1;
    }
    if (s->step != ST_CALL && o->mode != MODE_GET) return 1;
    for (int i = 0; i < o->n_expect; i++)
        if (!strstr(b, o->expect[i])) {
            fail(st, "%s: answer lacks '%s': %.200s", what, o->expect[i], b);
            return 0;
        }
    for (int i = 0; i < o->n_reject; i++)
        if (strstr(b, o->reject[i])) {
            fail(st, "%s: answer holds '%s': %.200s", what, o->reject[i], b);
            return 0;
        }
    if (o->count_str) {
        long c = count_of(b, o->count_str);
        if (c != o->count_n) {
            fail(st, "%s: '%s' occurs %ld times, not %ld", what, o->count_str, c, o->count_n);
            return 0;
        }
    }
    return 1;
}

/* Appends one call's answer to --answers. */
static void save_answer(plan *pl, const sess *s, int timed)
{
    if (!pl->answers) return;
    fprintf(pl->answers, "%ld %d %zu\n", s->call_no, timed, s->body.n);
    if (s->body.n) fwrite(s->body.p, 1, s->body.n, pl->answers);
    fputc('\n', pl->answers);
}

static void record(stats *st, double t0, double t1)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 4096;
        st->lat = realloc(st->lat, st->cap * sizeof *st->lat);
        st->start = realloc(st->start, st->cap * sizeof *st->start);
        if (!st->lat || !st->start) abort();
    }
    st->start[st->n] = t0;
    st->lat[st->n++] = (t1 - t0) * 1000;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-quantile (nearest rank) of n sorted values. */
static double pct(const double *v, size_t n, double p)
{
    if (!n) return 0;
    return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

/* Prints the summary of n latencies (sorted here) over seconds. */
static void print_summary(double *v, size_t n, double seconds)
{
    qsort(v, n, sizeof *v, cmp_d);
    printf("\"requests\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
           "\"throughput\":%.1f,\"seconds\":%.3f",
           n, pct(v, n, 0.50), pct(v, n, 0.99), n ? v[n - 1] : 0,
           seconds > 0 ? (double)n / seconds : 0, seconds);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: loadgen --url URL [--mode get|mcp|mcp-per-call] [--sessions N]\n"
               "               [--duration S | --requests N] [--warmup S | --warmup-requests N]\n"
               "               [--body JSON | --bodies FILE] [--answers FILE]\n"
               "               [--expect STR]... [--expect-count STR=N] [--reject STR]...\n"
               "               [--header 'Name: value']... [--timeout S] [--windows N]\n");
}

int main(int argc, char **argv)
{
    opts o = {.mode = MODE_GET, .sessions = 1, .duration = 5, .warmup = 1, .timeout = 30,
              .windows = 1, .warmup_requests = -1};
    static const struct option lo[] = {
        {"url", required_argument, 0, 'u'},      {"mode", required_argument, 0, 'm'},
        {"sessions", required_argument, 0, 'c'}, {"duration", required_argument, 0, 'd'},
        {"requests", required_argument, 0, 'n'}, {"warmup", required_argument, 0, 'w'},
        {"body", required_argument, 0, 'b'},     {"expect", required_argument, 0, 'e'},
        {"reject", required_argument, 0, 'r'},   {"expect-count", required_argument, 0, 'k'},
        {"header", required_argument, 0, 'H'},   {"timeout", required_argument, 0, 't'},
        {"windows", required_argument, 0, 'W'},
        {"warmup-requests", required_argument, 0, 'R'},
        {"bodies", required_argument, 0, 'B'},   {"answers", required_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'u': o.url = optarg; break;
        case 'm':
            if (!strcmp(optarg, "get")) o.mode = MODE_GET;
            else if (!strcmp(optarg, "mcp")) o.mode = MODE_MCP;
            else if (!strcmp(optarg, "mcp-per-call")) o.mode = MODE_PER_CALL;
            else {
                fprintf(stderr, "loadgen: --mode is get, mcp or mcp-per-call, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'c': o.sessions = atoi(optarg); break;
        case 'd': o.duration = atof(optarg); break;
        case 'n': o.requests = atol(optarg); break;
        case 'w': o.warmup = atof(optarg); break;
        case 'b': o.body = optarg; break;
        case 'e':
            if (o.n_expect == 16) return 2;
            o.expect[o.n_expect++] = optarg;
            break;
        case 'r':
            if (o.n_reject == 16) return 2;
            o.reject[o.n_reject++] = optarg;
            break;
        case 'k': {
            char *eq = strrchr(optarg, '=');
            if (!eq) {
                fprintf(stderr, "loadgen: --expect-count takes STR=N\n");
                return 2;
            }
            *eq = '\0';
            o.count_str = optarg;
            o.count_n = atol(eq + 1);
            break;
        }
        case 'H': o.extra = curl_slist_append(o.extra, optarg); break;
        case 't': o.timeout = atof(optarg); break;
        case 'W': o.windows = atoi(optarg); break;
        case 'R': o.warmup_requests = atol(optarg); break;
        case 'B': o.bodies_path = optarg; break;
        case 'A': o.answers_path = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!o.url || o.sessions < 1 || o.sessions > 4096 || o.duration <= 0 || o.warmup < 0 ||
        o.windows < 1 || o.windows > 100 ||
        o.warmup_requests < -1 || (o.mode != MODE_GET && !o.body == !o.bodies_path) ||
        (o.mode == MODE_GET && (o.bodies_path || o.warmup_requests >= 0))) {
        usage(stderr);
        fprintf(stderr, "loadgen: --url is required, --sessions is 1..4096, MCP modes need "
                        "--body or --bodies (not both), --warmup-requests is >= 0\n");
        return 2;
    }
    plan pl = {0};
    if (o.bodies_path && load_bodies(o.bodies_path, &pl)) return 2;
    if (o.answers_path && !(pl.answers = fopen(o.answers_path, "w"))) {
        perror(o.answers_path);
        return 2;
    }
    if (o.warmup_requests >= 0) o.warmup = 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)o.sessions + 8);

    stats st = {0};
    sess *ss = calloc((size_t)o.sessions, sizeof *ss);
    if (!ss) abort();
    double t_start = now();
    /* With --requests the run ends when that many timed calls are done; the
     * duration is then only a bound. */
    double span = o.requests > 0 ? o.duration * 10 : o.duration * o.windows;
    /* Long-lived MCP sessions first all open (a bridge may start a process per
     * session); the warm-up counts from then, or from the timeout. */
    int waiting = o.mode == MODE_MCP;
    int ready = 0;
    double t_measure = waiting ? t_start + o.timeout + o.warmup : t_start + o.warmup;
    double t_end = t_measure + span;
    double t_hard = t_end + o.timeout + 5;
    int active = 0;
    for (int i = 0; i < o.sessions; i++) {
        ss[i].h = curl_easy_init();
        ss[i].step = o.mode == MODE_GET ? ST_CALL : ST_INIT;
        ss[i].t_iter = now();
        setup(&o, &pl, &ss[i]);
        curl_multi_add_handle(m, ss[i].h);
        active++;
    }
    int stopping = 0;
    double t_stop = 0;
    while (active > 0) {
        int running = 0;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            sess *s = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            CURLcode rc = msg->data.result;
            curl_multi_remove_handle(m, s->h);
            double t = now();
            int timed = s->t_iter >= t_measure && t <= t_end;
            if (o.warmup_requests >= 0)
                timed = !waiting && s->call_no >= o.warmup_requests && t <= t_end;
            int ok = check(&o, s, rc, &st);
            enum step done = s->step;
            if (done == ST_CALL) save_answer(&pl, s, timed);
            /* What this session does next. */
            if (!ok) {
                if (o.mode != MODE_GET) s->step = ST_INIT;
                s->t_iter = t;
            } else if (done == ST_INIT) {
                s->step = ST_NOTIFY;
            } else if (done == ST_NOTIFY) {
                s->step = ST_CALL;
                if (o.mode == MODE_MCP) s->t_iter = t;
                if (waiting && !s->was_ready) {
                    s->was_ready = 1;
                    if (++ready == o.sessions) { /* all open: the warm-up starts */
                        waiting = 0;
                        t_measure = t + o.warmup;
                        t_end = t_measure + span;
                        t_hard = t_end + o.timeout + 5;
                    }
                }
            } else if (done == ST_CALL) {
                if (o.mode == MODE_PER_CALL) {
                    s->step = ST_DELETE;
                } else {
                    if (timed) record(&st, s->t_iter, t);
                    s->t_iter = t;
                }
            } else if (done == ST_DELETE) {
                /* in mcp mode a DELETE only ends the session when the run stops */
                if (timed && o.mode == MODE_PER_CALL) record(&st, s->t_iter, t);
                s->step = ST_INIT;
                s->t_iter = t;
            }
            /* a counted warm-up ends with its last iteration: the measurement starts */
            if (o.warmup_requests > 0 && s->call_no == o.warmup_requests - 1 &&
                done == (o.mode == MODE_PER_CALL ? ST_DELETE : ST_CALL)) {
                t_measure = t;
                t_end = t_measure + span;
                t_hard = t_end + o.timeout + 5;
            }
            if (!stopping && ((o.requests > 0 && (long)st.n >= o.requests) || t >= t_end)) {
                stopping = 1;
                t_stop = t < t_end ? t : t_end;
            }
            int finished = t >= t_hard;
            if (stopping && !finished) {
                if (o.mode == MODE_MCP && ok && done != ST_DELETE && s->sid[0])
                    s->step = ST_DELETE; /* end the session politely, untimed */
                else if (!(o.mode == MODE_PER_CALL && s->step == ST_DELETE))
                    finished = 1;
            }
            if (finished) {
                active--;
                continue;
            }
            setup(&o, &pl, s);
            curl_multi_add_handle(m, s->h);
        }
        if (active > 0) curl_multi_poll(m, NULL, 0, 100, NULL);
        if (now() > t_hard) break;
    }
    double measured = (stopping ? t_stop : now()) - t_measure;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    /* Each window: the calls that started in it (and, being timed, ended
     * before the deadline). */
    int nw = o.requests > 0 ? 1 : o.windows;
    double wlen = measured / nw;
    double *tmp = malloc((st.n + 1) * sizeof *tmp);
    if (!tmp) abort();
    printf("{\"errors\":%ld,\"sessions\":%d,\"cpu_s\":%.3f,\"first_error\":\"%s\",",
           st.errors, o.sessions, cpu_s, st.first_error);
    printf("\"windows\":[");
    for (int w = 0; w < nw; w++) {
        double a = t_measure + w * wlen, b = a + wlen;
        size_t k = 0;
        for (size_t i = 0; i < st.n; i++)
            if (st.start[i] >= a && (st.start[i] < b || w == nw - 1)) tmp[k++] = st.lat[i];
        printf("%s{", w ? "," : "");
        print_summary(tmp, k, wlen);
        printf("}");
    }
    printf("],");
    print_summary(st.lat, st.n, measured);
    printf("}\n");
    free(tmp);
    free(st.start);
    if (pl.answers && fclose(pl.answers)) perror(o.answers_path);
    for (size_t i = 0; i < pl.n_bodies; i++) free(pl.bodies[i]);
    free(pl.bodies);
    for (int i = 0; i < o.sessions; i++) {
        curl_multi_remove_handle(m, ss[i].h);
        curl_easy_cleanup(ss[i].h);
        curl_slist_free_all(ss[i].hdrs);
        free(ss[i].body.p);
        free(ss[i].sent.p);
    }
    free(ss);
    free(st.lat);
    curl_slist_free_all(o.extra);
    curl_multi_cleanup(m);
    curl_global_cleanup();
    return st.errors || st.n == 0 ? 1 : 0;
}
