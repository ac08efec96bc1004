/*
 * procs.c - desktop-commander's process tools (terminal-manager.ts,
 * tools/improved-process-tools.ts and tools/process.ts of 0.2.7).
 *
 * start_process runs `SHELL -c COMMAND` (the shell argument, else config
 * defaultShell, /bin/sh) with pipes on stdin, stdout and stderr and
 * TERM=xterm-256color. The children belong to the server process, not to a
 * client session: every MCP session of the sandbox (the gateway runs one
 * server process per sandbox) sees the same sessions, so a REPL keeps its
 * state across calls and sessions. One reader thread collects every child's
 * output (stdout and stderr interleaved in arrival order) into `output` (all
 * of it) and `last` (not yet read), notices exits, and sends the SIGKILL
 * that follows force_terminate's SIGINT after a second.
 *
 * The waiting rules and texts are upstream's, with its timers: start_process
 * returns when a stdout chunk ends in a prompt character, when a 100 ms check
 * of the output finds a REPL prompt, at timeout_ms, or at exit;
 * read_process_output (5 s default) and interact_with_process (8 s) poll
 * every 200 ms. After exit a session moves to the 100 most recent completed
 * ones, which only a read that is already waiting can see; later reads
 * answer "No active session found for PID N", as 0.2.7 does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "servers/common/proc.h"
#include "servers/desktop-commander/dc.h"

extern char **environ;

#define OUT_CAP ((size_t)64 << 20) /* per buffer; beyond it new output is dropped */
#define MAX_COMPLETED 100

typedef struct sess {
    long pid;
    int in_fd, out_fd, err_fd;
    mb_buf output, last;
    int blocked;
    double start_ms, end_ms;
    uint64_t quick_out, quick_any; /* chunks that ended in a prompt character */
    int exited;
    int exit_code; /* -1: killed by a signal (Node's null) */
    int64_t kill_at;
    size_t out_len0; /* output length at exit, before the unread part joined it */
    struct sess *next;
} sess;

struct dc_procs {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    sess *active;
    sess *completed; /* oldest first */
    size_t ncompleted;
    pthread_t reader;
    int started, stop;
    int wake[2];
};

static double wall_ms(void) { return mb_now() * 1000.0; }

static void wake(dc_procs *p)
{
    char c = 1;
    ssize_t r = write(p->wake[1], &c, 1);
    (void)r;
}

static void sess_free(sess *s)
{
    if (s->in_fd >= 0) close(s->in_fd);
    if (s->out_fd >= 0) close(s->out_fd);
    if (s->err_fd >= 0) close(s->err_fd);
    mb_buf_free(&s->output);
    mb_buf_free(&s->last);
    free(s);
}

static void append(mb_buf *b, const char *d, size_t n)
{
    if (b->len + n > OUT_CAP) return;
    mb_buf_append(b, d, n);
}

/* Reads what fd has; 0 at EOF/error (fd closed by the caller). Lock held. */
static int drain(dc_procs *p, sess *s, int *fd, int is_out)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            append(&s->output, buf, (size_t)n);
            append(&s->last, buf, (size_t)n);
            if (dc_quick_prompt(buf, (size_t)n)) {
                s->quick_any++;
                if (is_out) s->quick_out++;
            }
            pthread_cond_broadcast(&p->cond);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 1;
        close(*fd);
        *fd = -1;
        return 0;
    }
}

/* A child exited: it joins the completed sessions (output + unread output,
 * as 0.2.7 combines them). Lock held. */
static void complete(dc_procs *p, sess *s, int status)
{
    if (s->out_fd >= 0) drain(p, s, &s->out_fd, 1);
    if (s->err_fd >= 0) drain(p, s, &s->err_fd, 0);
    s->exited = 1;
    s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    s->end_ms = wall_ms();
    s->out_len0 = s->output.len;
    mb_buf_append(&s->output, s->last.data ? s->last.data : "", s->last.len);
    mb_buf_reset(&s->last);
    if (s->in_fd >= 0) close(s->in_fd);
    if (s->out_fd >= 0) close(s->out_fd);
    if (s->err_fd >= 0) close(s->err_fd);
    s->in_fd = s->out_fd = s->err_fd = -1;
    for (sess **pp = &p->active; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    s->next = NULL;
    /* replace an older completed entry of the same pid (Map#set) */
    for (sess **pp = &p->completed; *pp; pp = &(*pp)->next)
        if ((*pp)->pid == s->pid) {
            s->next = (*pp)->next;
            sess_free(*pp);
            *pp = s;
            pthread_cond_broadcast(&p->cond);
            return;
        }
    sess **tail = &p->completed;
    while (*tail) tail = &(*tail)->next;
    *tail = s;
    if (++p->ncompleted > MAX_COMPLETED) {
        sess *old = p->completed;
        p->completed = old->next;
        sess_free(old);
        p->ncompleted--;
    }
    pthread_cond_broadcast(&p->cond);
}

static void *reader_main(void *arg)
{
    dc_procs *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        size_t n = 1;
        for (sess *s = p->active; s; s = s->next) n += 2;
        struct pollfd *pf = mb_calloc(n, sizeof *pf);
        sess **who = mb_calloc(n, sizeof *who);
        size_t k = 0;
        pf[k++] = (struct pollfd){.fd = p->wake[0], .events = POLLIN};
        for (sess *s = p->active; s; s = s->next) {
            if (s->out_fd >= 0) { who[k] = s; pf[k++] = (struct pollfd){.fd = s->out_fd, .events = POLLIN}; }
            if (s->err_fd >= 0) { who[k] = s; pf[k++] = (struct pollfd){.fd = s->err_fd, .events = POLLIN}; }
        }
        pthread_mutex_unlock(&p->lock);
        poll(pf, k, 50);
        pthread_mutex_lock(&p->lock);
        if (pf[0].revents) {
            char buf[64];
            while (read(p->wake[0], buf, sizeof buf) > 0) {}
        }
        for (size_t i = 1; i < k; i++) {
            if (!pf[i].revents) continue;
            sess *s = who[i];
            /* the session may have completed meanwhile; it is still allocated
             * only if it is in the active list */
            int live = 0;
            for (sess *a = p->active; a; a = a->next) live |= a == s;
            if (!live) continue;
            if (pf[i].fd == s->out_fd) drain(p, s, &s->out_fd, 1);
            else if (pf[i].fd == s->err_fd) drain(p, s, &s->err_fd, 0);
        }
        free(pf);
        free(who);
        int64_t now = mb_mono_ms();
        for (sess *s = p->active, *next; s; s = next) {
            next = s->next;
            int status;
            pid_t r = waitpid((pid_t)s->pid, &status, WNOHANG);
            if (r == (pid_t)s->pid) {
                complete(p, s, status);
                continue;
            }
            if (s->kill_at && now >= s->kill_at) {
                kill((pid_t)s->pid, SIGKILL);
                s->kill_at = 0;
            }
        }
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

dc_procs *dc_procs_new(void)
{
    dc_procs *p = mb_calloc(1, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK)) p->wake[0] = p->wake[1] = -1;
    return p;
}

void dc_procs_free(dc_procs *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    for (sess *s = p->active; s; s = s->next) kill(-(pid_t)s->pid, SIGKILL);
    pthread_mutex_unlock(&p->lock);
    if (p->started) {
        wake(p);
        pthread_join(p->reader, NULL);
    }
    for (sess *s = p->active, *n; s; s = n) {
        n = s->next;
        waitpid((pid_t)s->pid, NULL, 0);
        sess_free(s);
    }
    for (sess *s = p->completed, *n; s; s = n) {
        n = s->next;
        sess_free(s);
    }
    if (p->wake[0] >= 0) close(p->wake[0]);
    if (p->wake[1] >= 0) close(p->wake[1]);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Lock held. */
static sess *find_active(dc_procs *p, long pid)
{
    for (sess *s = p->active; s; s = s->next)
        if (s->pid == pid) return s;
    return NULL;
}

/* terminalManager.getNewOutput: the unread output of an active session
 * (consumed), the completion text of a finished one, or NULL. Lock held. */
static char *new_output(dc_procs *p, long pid, size_t *len)
{
    sess *s = find_active(p, pid);
    if (s) {
        *len = s->last.len;
        char *r = mb_memdup0(s->last.data ? s->last.data : "", s->last.len);
        mb_buf_reset(&s->last);
        return r;
    }
    for (sess *c = p->completed; c; c = c->next)
        if (c->pid == pid) {
            mb_buf b = {0};
            char *rt = mb_js_number((c->end_ms - c->start_ms) / 1000.0);
            char code[16];
            if (c->exit_code < 0) snprintf(code, sizeof code, "null");
            else snprintf(code, sizeof code, "%d", c->exit_code);
            mb_buf_printf(&b, "Process completed with exit code %s\nRuntime: %ss\nFinal output:\n", code, rt);
            free(rt);
            mb_buf_append(&b, c->output.data ? c->output.data : "", c->output.len);
            *len = b.len;
            return mb_buf_steal(&b);
        }
    return NULL;
}

/* Waits on the condition until `until` (monotonic ms). Lock held. */
static void wait_until(dc_procs *p, int64_t until)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(until / 1000);
    ts.tv_nsec = (long)(until % 1000) * 1000000L;
    pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

static int64_t ms_arg(double d, double def)
{
    if (isnan(d)) d = def;
    if (d < 1) d = 1; /* setTimeout clamps */
    if (d > 2147483647.0) d = 1; /* and overflows to 1 ms */
    return (int64_t)d;
}

/* ------------------------------------------------------ commandManager */

static char *lower_dup(const char *s, size_t n)
{
    size_t l;
    return mb_js_lower(s, n, &l);
}

/* extractBaseCommand: env assignments removed, first token, lower case. */
static char *base_command(const char *cmd)
{
    /* replace(/\w+=\S+\s* /g, '') */
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t n = strlen(cmd), i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && (cmd[j] == '_' || (cmd[j] >= '0' && cmd[j] <= '9') ||
                         ((cmd[j] | 32) >= 'a' && (cmd[j] | 32) <= 'z')))
            j++;
        if (j > i && j < n && cmd[j] == '=' && j + 1 < n && !strchr(" \t\n\r\f\v", cmd[j + 1])) {
            size_t k = j + 1;
            while (k < n && !strchr(" \t\n\r\f\v", cmd[k])) k++;
            while (k < n && strchr(" \t\n\r\f\v", cmd[k])) k++;
            i = k;
            continue;
        }
        if (j > i) {
            mb_buf_append(&b, cmd + i, j - i);
            i = j;
        } else {
            mb_buf_putc(&b, cmd[i]);
            i++;
        }
    }
    size_t off, len;
    dc_trim(b.data, b.len, &off, &len);
    char *r = NULL;
    if (len) {
        size_t t = 0;
        while (t < len && !strchr(" \t\n\r\f\v", b.data[off + t])) t++;
        char f = b.data[off];
        if (f != '(' && f != '$') r = lower_dup(b.data + off, t);
    }
    mb_buf_free(&b);
    return r;
}

static void push_unique(json_t *arr, char *cmd)
{
    if (!cmd) return;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (!strcmp(json_string_value(v), cmd)) {
            free(cmd);
            return;
        }
    json_array_append_new(arr, json_string(cmd));
    free(cmd);
}

static void extract(const char *in, size_t len, json_t *out)
{
    size_t off, n;
    dc_trim(in, len, &off, &n);
    const char *s = in + off;
    int inq = 0, esc = 0;
    char q = 0;
    mb_buf cur = {0};
    mb_buf_puts(&cur, "");
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && !esc) { esc = 1; mb_buf_putc(&cur, c); continue; }
        if (esc) { esc = 0; mb_buf_putc(&cur, c); continue; }
        if ((c == '"' || c == '\'') && !inq) { inq = 1; q = c; mb_buf_putc(&cur, c); continue; }
        if (inq && c == q) { inq = 0; q = 0; mb_buf_putc(&cur, c); continue; }
        if (inq) { mb_buf_putc(&cur, c); continue; }
        if (c == '(') {
            int open = 1;
            size_t j = i + 1;
            while (j < n && open > 0) {
                if (s[j] == '(') open++;
                if (s[j] == ')') open--;
                j++;
            }
            extract(s + i + 1, j - 1 - (i + 1) > n ? 0 : j - 1 - (i + 1), out);
            i = j - 1;
            continue;
        }
        static const char *const seps[] = {";", "&&", "||", "|", "&", NULL};
        int sep = 0;
        for (int k = 0; seps[k]; k++) {
            size_t sl = strlen(seps[k]);
            if (i + sl <= n && !strncmp(s + i, seps[k], sl)) {
                size_t co, cn;
                dc_trim(cur.data, cur.len, &co, &cn);
                if (cn) {
                    char *t = mb_strndup(cur.data + co, cn);
                    push_unique(out, base_command(t));
                    free(t);
                }
                i += sl - 1;
                mb_buf_reset(&cur);
                mb_buf_puts(&cur, "");
                sep = 1;
                break;
            }
        }
        if (!sep) mb_buf_putc(&cur, c);
    }
    size_t co, cn;
    dc_trim(cur.data, cur.len, &co, &cn);
    if (cn) {
        char *t = mb_strndup(cur.data + co, cn);
        push_unique(out, base_command(t));
        free(t);
    }
    mb_buf_free(&cur);
}

static int command_allowed(dc_server *dc, const char *cmd)
{
    json_t *cfg = dc_config_copy(dc);
    json_t *blocked = json_object_get(cfg, "blockedCommands");
    json_t *cmds = json_array();
    extract(cmd, strlen(cmd), cmds);
    int ok = 1;
    if (!json_array_size(cmds)) {
        /* getBaseCommand: split(' ')[0].toLowerCase().trim() */
        const char *sp = strchr(cmd, ' ');
        char *b = lower_dup(cmd, sp ? (size_t)(sp - cmd) : strlen(cmd));
        size_t off, n;
        dc_trim(b, strlen(b), &off, &n);
        json_array_append_new(cmds, json_stringn(b + off, n));
        free(b);
    }
    size_t i, j;
    json_t *c, *bc;
    json_array_foreach(cmds, i, c) json_array_foreach(blocked, j, bc)
        if (json_is_string(bc) && !strcmp(json_string_value(bc), json_string_value(c))) ok = 0;
    json_decref(cmds);
    json_decref(cfg);
    return ok;
}

/* ------------------------------------------------------------ spawning */

static int spawn(dc_procs *p, const char *shell, const char *command, sess **out)
{
    int in[2], o[2], e[2], ep[2];
    if (pipe2(in, O_CLOEXEC)) return -1;
    if (pipe2(o, O_CLOEXEC)) { close(in[0]); close(in[1]); return -1; }
    if (pipe2(e, O_CLOEXEC)) { close(in[0]); close(in[1]); close(o[0]); close(o[1]); return -1; }
    if (pipe2(ep, O_CLOEXEC)) {
        close(in[0]); close(in[1]); close(o[0]); close(o[1]); close(e[0]); close(e[1]);
        return -1;
    }
    /* environment: ours plus TERM=xterm-256color */
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **envp = mb_calloc(ne + 2, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "TERM=", 5)) envp[k++] = environ[i];
    envp[k++] = "TERM=xterm-256color";
    const char *argv[] = {shell, "-c", command, NULL};
    pthread_mutex_lock(&p->lock);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_DFL);
        dup2(in[0], 0);
        dup2(o[1], 1);
        dup2(e[1], 2);
        execvpe(shell, (char *const *)argv, envp);
        int err = errno;
        ssize_t w = write(ep[1], &err, sizeof err);
        (void)w;
        _exit(127);
    }
    free(envp);
    close(in[0]);
    close(o[1]);
    close(e[1]);
    close(ep[1]);
    if (pid < 0) {
        pthread_mutex_unlock(&p->lock);
        close(in[1]); close(o[0]); close(e[0]); close(ep[0]);
        return -1;
    }
    int err = 0;
    ssize_t r;
    do r = read(ep[0], &err, sizeof err); while (r < 0 && errno == EINTR);
    close(ep[0]);
    if (r > 0) {
        waitpid(pid, NULL, 0);
        pthread_mutex_unlock(&p->lock);
        close(in[1]); close(o[0]); close(e[0]);
        return -1;
    }
    fcntl(o[0], F_SETFL, O_NONBLOCK);
    fcntl(e[0], F_SETFL, O_NONBLOCK);
    sess *s = mb_calloc(1, sizeof *s);
    s->pid = pid;
    s->in_fd = in[1];
    s->out_fd = o[0];
    s->err_fd = e[0];
    s->start_ms = wall_ms();
    s->next = p->active;
    p->active = s;
    if (!p->started) {
        p->started = 1;
        pthread_create(&p->reader, NULL, reader_main, p);
    }
    pthread_mutex_unlock(&p->lock);
    wake(p);
    *out = s;
    return 0;
}

/* --------------------------------------------------------------- tools */

static void status_line(mb_buf *b, const dc_state *st, long pid)
{
    char *m = dc_state_message(st, pid);
    mb_buf_printf(b, "\n%s %s", st->waiting ? "\xF0\x9F\x94\x84" : "\xE2\x9C\x85", m);
    free(m);
}

int dc_start_process(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("start_process", args, res)) return 1;
    const char *command = json_string_value(json_object_get(args, "command"));
    double timeout = json_number_value(json_object_get(args, "timeout_ms"));
    const char *shell = json_string_value(json_object_get(args, "shell"));
    if (!command_allowed(dc, command)) return dc_errorf(res, "Command not allowed: %s", command);
    char *shell_used = NULL;
    if (shell && *shell) {
        shell_used = mb_strdup(shell);
    } else {
        json_t *cfg = dc_config_copy(dc);
        const char *ds = json_string_value(json_object_get(cfg, "defaultShell"));
        const char *envsh = getenv("SHELL");
        shell_used = mb_strdup(ds && *ds ? ds : envsh && *envsh ? envsh : "/bin/sh");
        json_decref(cfg);
    }
    /* ssh gets -t */
    char *cmd;
    size_t off, n;
    dc_trim(command, strlen(command), &off, &n);
    if (n >= 4 && !strncmp(command + off, "ssh ", 4) && !strstr(command, " -t") &&
        !strncmp(command, "ssh ", 4))
        cmd = mb_asprintf("ssh -t %s", command + 4);
    else
        cmd = mb_strdup(command);
    dc_procs *p = dc->procs;
    sess *s;
    if (spawn(p, shell_used, cmd, &s)) {
        free(cmd);
        free(shell_used);
        mb_mcp_text(res, "Error: Failed to get process ID. The command could not be executed.");
        mb_mcp_set_is_error(res, 1);
        return 1;
    }
    free(cmd);
    long pid = s->pid;
    int64_t t0 = mb_mono_ms(), deadline = t0 + ms_arg(timeout, 1000), tick = t0 + 100;
    pthread_mutex_lock(&p->lock);
    uint64_t q0 = 0; /* quick hits of stdout since the start */
    int blocked = 0;
    char *output = NULL;
    size_t olen = 0;
    for (;;) {
        int live = find_active(p, pid) == s;
        mb_buf *ob = live ? &s->output : NULL;
        if (live && s->quick_out > q0) {
            blocked = s->blocked = 1;
        } else if (!live) {
            blocked = 0;
        } else {
            int64_t now = mb_mono_ms();
            if (now >= tick) {
                tick += 100;
                size_t o2, n2;
                dc_trim(ob->data ? ob->data : "", ob->len, &o2, &n2);
                if (n2) {
                    dc_state st;
                    dc_analyze(ob->data, ob->len, &st);
                    if (st.waiting) blocked = s->blocked = 1;
                }
            }
            if (!blocked && now >= deadline) blocked = s->blocked = 1;
            if (!blocked) {
                wait_until(p, tick < deadline ? tick : deadline);
                continue;
            }
        }
        if (live) {
            output = mb_memdup0(ob->data ? ob->data : "", ob->len);
            olen = ob->len;
        } else {
            /* exited: its output is with the completed session */
            for (sess *c = p->completed; c; c = c->next)
                if (c == s) {
                    size_t all = c->out_len0;
                    output = mb_memdup0(c->output.data ? c->output.data : "", all);
                    olen = all;
                }
            if (!output) output = mb_strdup("");
        }
        break;
    }
    pthread_mutex_unlock(&p->lock);
    mb_buf b = {0};
    mb_buf_printf(&b, "Process started with PID %ld (shell: %s)\nInitial output:\n", pid, shell_used);
    mb_buf_append(&b, output, olen);
    dc_state st;
    dc_analyze(output, olen, &st);
    if (st.waiting || st.finished) status_line(&b, &st, pid);
    else if (blocked) mb_buf_puts(&b, "\n\xE2\x8F\xB3 Process is running. Use read_process_output to get more output.");
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    free(output);
    free(shell_used);
    return 0;
}

static long pid_arg(json_t *args)
{
    double d = json_number_value(json_object_get(args, "pid"));
    return (d >= -2147483648.0 && d <= 2147483647.0 && d == floor(d)) ? (long)d : -999999999;
}

int dc_read_process_output(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("read_process_output", args, res)) return 1;
    long pid = pid_arg(args);
    json_t *jt = json_object_get(args, "timeout_ms");
    int64_t timeout = ms_arg(jt ? json_number_value(jt) : 5000, 5000);
    dc_procs *p = dc->procs;
    pthread_mutex_lock(&p->lock);
    sess *s = find_active(p, pid);
    if (!s) {
        pthread_mutex_unlock(&p->lock);
        char *n = mb_js_number(json_number_value(json_object_get(args, "pid")));
        mb_mcp_textf(res, "No active session found for PID %s", n);
        free(n);
        mb_mcp_set_is_error(res, 1);
        return 1;
    }
    mb_buf output = {0};
    mb_buf_puts(&output, "");
    int early = 0, timed_out = 0, have_state = 0;
    dc_state st = {0};
    size_t nl;
    char *init = new_output(p, pid, &nl);
    if (init && nl) {
        dc_state s0;
        dc_analyze(init, nl, &s0);
        if (s0.waiting) {
            early = 1;
            st = s0;
            have_state = 1;
        }
        mb_buf_append(&output, init, nl);
    } else {
        int64_t t0 = mb_mono_ms(), deadline = t0 + timeout, tick = t0 + 200;
        uint64_t q0 = s->quick_any;
        int was_live = 1;
        for (;;) {
            int64_t now = mb_mono_ms();
            /* the immediate detector (listeners exist only while the session is active) */
            if (was_live && find_active(p, pid) == s && s->quick_any > q0) {
                q0 = s->quick_any;
                size_t l2;
                char *no = new_output(p, pid, &l2);
                mb_buf tmp = {0};
                mb_buf_append(&tmp, output.data, output.len);
                mb_buf_append(&tmp, no, l2);
                dc_state s1;
                dc_analyze(tmp.data, tmp.len, &s1);
                mb_buf_free(&tmp);
                if (s1.waiting) {
                    early = 1;
                    st = s1;
                    have_state = 1;
                    mb_buf_append(&output, no, l2);
                    free(no);
                    break;
                }
                /* the read output is lost for this call, as upstream's detector drops it */
                free(no);
            }
            was_live = find_active(p, pid) == s;
            if (now >= tick) {
                tick += 200;
                size_t l2 = 0;
                char *no = new_output(p, pid, &l2);
                if (no && l2) {
                    mb_buf cur = {0};
                    mb_buf_append(&cur, output.data, output.len);
                    mb_buf_append(&cur, no, l2);
                    dc_state s1;
                    dc_analyze(cur.data, cur.len, &s1);
                    if (s1.waiting) {
                        early = 1;
                        st = s1;
                        have_state = 1;
                        mb_buf_append(&output, no, l2);
                        mb_buf_free(&cur);
                        free(no);
                        break;
                    }
                    mb_buf_free(&output);
                    output = cur;
                    if (s1.finished) {
                        st = s1;
                        have_state = 1;
                        mb_buf_append(&output, no, l2); /* output += newOutput once more */
                        free(no);
                        break;
                    }
                }
                free(no);
            }
            if (now >= deadline) {
                size_t l2 = 0;
                char *no = new_output(p, pid, &l2);
                if (no) mb_buf_append(&output, no, l2);
                free(no);
                timed_out = 1;
                break;
            }
            wait_until(p, tick < deadline ? tick : deadline);
        }
    }
    free(init);
    pthread_mutex_unlock(&p->lock);
    if (!have_state) dc_analyze(output.data, output.len, &st);
    mb_buf b = {0};
    if (output.len) mb_buf_append(&b, output.data, output.len);
    else mb_buf_puts(&b, "No new output available");
    if (early && st.waiting) status_line(&b, &st, pid);
    else if (st.finished) status_line(&b, &st, pid);
    else if (timed_out) mb_buf_puts(&b, "\n\xE2\x8F\xB1\xEF\xB8\x8F Timeout reached - process may still be running");
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    mb_buf_free(&output);
    return 0;
}

int dc_interact_with_process(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    /* the one process tool whose handler does not parse first: safeParse's text */
    if (dc_safe_parse("interact_with_process", args, res)) return 1;
    long pid = pid_arg(args);
    const char *input = json_string_value(json_object_get(args, "input"));
    size_t inlen = json_string_length(json_object_get(args, "input"));
    json_t *jt = json_object_get(args, "timeout_ms");
    double tms = jt ? json_number_value(jt) : 8000;
    json_t *jw = json_object_get(args, "wait_for_prompt");
    int wait_prompt = jw ? json_is_true(jw) : 1;
    char *pidtxt = mb_js_number(json_number_value(json_object_get(args, "pid")));
    dc_procs *p = dc->procs;
    pthread_mutex_lock(&p->lock);
    sess *s = find_active(p, pid);
    int sent = 0;
    if (s && s->in_fd >= 0) {
        mb_buf w = {0};
        mb_buf_append(&w, input, inlen);
        if (!inlen || input[inlen - 1] != '\n') mb_buf_putc(&w, '\n');
        size_t off = 0;
        sent = 1;
        while (off < w.len) {
            ssize_t r = write(s->in_fd, w.data + off, w.len - off);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) break; /* EPIPE: the stream errors later, the call still goes on */
            off += (size_t)r;
        }
        mb_buf_free(&w);
    }
    if (!sent) {
        pthread_mutex_unlock(&p->lock);
        mb_mcp_textf(res, "Error: Failed to send input to process %s. The process may have exited "
                          "or doesn't accept input.", pidtxt);
        free(pidtxt);
        mb_mcp_set_is_error(res, 1);
        return 1;
    }
    if (!wait_prompt) {
        pthread_mutex_unlock(&p->lock);
        mb_mcp_textf(res, "\xE2\x9C\x85 Input sent to process %s. Use read_process_output to get the response.", pidtxt);
        free(pidtxt);
        return 0;
    }
    mb_buf output = {0};
    mb_buf_puts(&output, "");
    int have_state = 0, early = 0;
    dc_state st = {0};
    double maxd = ceil((isnan(tms) ? 0 : tms) / 200);
    long attempts = 0;
    int64_t t0 = mb_mono_ms(), tick = t0 + 200, quick_at = 0;
    uint64_t q0 = s->quick_any;
    int listening = 1;
    for (;;) {
        int64_t now = mb_mono_ms();
        if (listening && find_active(p, pid) == s && s->quick_any > q0) {
            q0 = s->quick_any;
            if (!quick_at) quick_at = now + 50;
        }
        if (quick_at && now >= quick_at) {
            quick_at = 0;
            size_t l2 = 0;
            char *no = new_output(p, pid, &l2);
            if (no && l2) {
                mb_buf_append(&output, no, l2);
                dc_state s1;
                dc_analyze(output.data, output.len, &s1);
                if (s1.waiting) {
                    st = s1;
                    have_state = 1;
                    early = 1;
                    free(no);
                    break;
                }
            }
            free(no);
        }
        if (now >= tick) {
            tick += 200;
            size_t l2 = 0;
            char *no = new_output(p, pid, &l2);
            if (no && l2) {
                mb_buf_append(&output, no, l2);
                dc_analyze(output.data, output.len, &st);
                have_state = 1;
                if (st.waiting) {
                    early = 1;
                    free(no);
                    break;
                }
                if (st.finished) {
                    free(no);
                    break;
                }
            }
            free(no);
            if ((double)++attempts >= maxd) break;
        }
        listening = find_active(p, pid) == s;
        int64_t next = tick;
        if (quick_at && quick_at < next) next = quick_at;
        wait_until(p, next);
    }
    pthread_mutex_unlock(&p->lock);
    char *clean = dc_clean_output(output.data, input);
    int timeout_reached = !early && !(have_state && (st.finished || st.waiting));
    if (!have_state) dc_analyze(output.data, output.len, &st);
    mb_buf status = {0};
    mb_buf_puts(&status, "");
    if (st.waiting || st.finished) status_line(&status, &st, pid);
    else if (timeout_reached) mb_buf_puts(&status, "\n\xE2\x8F\xB1\xEF\xB8\x8F Response may be incomplete (timeout reached)");
    size_t off, n;
    dc_trim(clean, strlen(clean), &off, &n);
    mb_buf b = {0};
    if (!n && !timeout_reached) {
        mb_buf_printf(&b, "\xE2\x9C\x85 Input executed in process %s.\n\xF0\x9F\x93\xAD (No output produced)%s",
                      pidtxt, status.data);
    } else {
        mb_buf_printf(&b, "\xE2\x9C\x85 Input executed in process %s", pidtxt);
        if (n) mb_buf_printf(&b, ":\n\n\xF0\x9F\x93\xA4 Output:\n%s", clean);
        else mb_buf_puts(&b, ".\n\xF0\x9F\x93\xAD (No output produced)");
        if (status.len) mb_buf_printf(&b, "\n\n%s", status.data);
    }
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    mb_buf_free(&status);
    mb_buf_free(&output);
    free(clean);
    free(pidtxt);
    return 0;
}

int dc_force_terminate(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("force_terminate", args, res)) return 1;
    long pid = pid_arg(args);
    char *pidtxt = mb_js_number(json_number_value(json_object_get(args, "pid")));
    dc_procs *p = dc->procs;
    pthread_mutex_lock(&p->lock);
    sess *s = find_active(p, pid);
    if (s) {
        kill((pid_t)pid, SIGINT);
        s->kill_at = mb_mono_ms() + 1000;
    }
    pthread_mutex_unlock(&p->lock);
    if (s) mb_mcp_textf(res, "Successfully initiated termination of session %s", pidtxt);
    else mb_mcp_textf(res, "No active session found for PID %s", pidtxt);
    free(pidtxt);
    return 0;
}

int dc_list_sessions(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    (void)args;
    dc_procs *p = dc->procs;
    mb_buf b = {0};
    double now = wall_ms();
    pthread_mutex_lock(&p->lock);
    /* Map order: oldest first (the list holds the newest first) */
    size_t n = 0;
    for (sess *s = p->active; s; s = s->next) n++;
    sess **v = mb_calloc(n ? n : 1, sizeof *v);
    size_t i = n;
    for (sess *s = p->active; s; s = s->next) v[--i] = s;
    for (i = 0; i < n; i++) {
        char *rt = mb_js_number(round((now - v[i]->start_ms) / 1000.0));
        mb_buf_printf(&b, "%sPID: %ld, Blocked: %s, Runtime: %ss", i ? "\n" : "", v[i]->pid,
                      v[i]->blocked ? "true" : "false", rt);
        free(rt);
    }
    pthread_mutex_unlock(&p->lock);
    free(v);
    if (!n) mb_mcp_text(res, "No active sessions");
    else mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    return 0;
}

int dc_list_processes(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)dc;
    (void)call;
    (void)args;
    const char *argv[] = {"/bin/sh", "-c", "ps aux", NULL};
    mb_proc_spec spec = {.argv = argv, .timeout_ms = 0, .watch_fd = -1, .max_output = 1024 * 1024,
                         .kill_on_overflow = 1};
    mb_proc_result r = {0};
    mb_err e = {0};
    if (mb_proc_run(&spec, &r, &e)) return dc_errorf(res, "Failed to list processes: %s", e.msg);
    if (r.overflowed) {
        mb_proc_result_free(&r);
        return dc_error(res, "Failed to list processes: stdout maxBuffer length exceeded");
    }
    if (!r.exited || r.exit_code != 0) {
        int rc = dc_errorf(res, "Failed to list processes: Command failed: ps aux\n%s",
                           r.err.data ? r.err.data : "");
        mb_proc_result_free(&r);
        return rc;
    }
    mb_buf b = {0};
    int first = 1, k = 0;
    char *data = r.out.data ? r.out.data : (char *)"";
    /* split('\n').slice(1).filter(Boolean) */
    char *line = data;
    while (line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (k++ > 0 && *line) {
            /* line.split(/\s+/) */
            char *parts[4096];
            int np = 0;
            char *q = line;
            parts[np++] = q;
            for (; *q; q++)
                if (strchr(" \t\r\f\v", *q)) {
                    *q = 0;
                    char *nx = q + 1;
                    while (*nx && strchr(" \t\r\f\v", *nx)) nx++;
                    if (np < 4096) parts[np++] = nx;
                    q = nx - 1;
                }
            const char *pid_s = np > 1 ? parts[1] : "";
            char *end;
            long pid = strtol(pid_s, &end, 10);
            int valid = end != pid_s;
            mb_buf_printf(&b, "%sPID: ", first ? "" : "\n");
            if (valid) mb_buf_printf(&b, "%ld", pid);
            else mb_buf_puts(&b, "NaN");
            mb_buf_printf(&b, ", Command: %s, CPU: %s, Memory: %s", parts[np - 1],
                          np > 2 ? parts[2] : "undefined", np > 3 ? parts[3] : "undefined");
            first = 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    mb_buf_puts(&b, "");
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    mb_proc_result_free(&r);
    return 0;
}

int dc_kill_process(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)dc;
    (void)call;
    if (dc_parse("kill_process", args, res)) return 1;
    double d = json_number_value(json_object_get(args, "pid"));
    char *txt = mb_js_number(d);
    int rc = 0;
    if (d != floor(d) || d < -2147483648.0 || d > 2147483647.0) {
        rc = dc_errorf(res, "Failed to kill process: The \"pid\" argument must be of type number. "
                            "Received type number (%s)", txt);
    } else if (kill((pid_t)d, SIGTERM)) {
        rc = dc_errorf(res, "Failed to kill process: kill %s", mb_node_errname(errno));
    } else {
        mb_mcp_textf(res, "Successfully terminated process %s", txt);
    }
    free(txt);
    return rc;
}
