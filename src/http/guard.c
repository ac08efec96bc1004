/*
 * guard.c - the connection guard: a record of every open connection, so
 * that slow or half-open connections cannot lock other clients out.
 *
 *   - a cap on connections from one client address (max_conn_per_ip);
 *   - a cap on connections that have not authenticated (max_anon_conns); the
 *     rest of max_connections is kept for connections that did;
 *   - at either cap a new connection is not refused while a connection
 *     counted against that cap is waiting (for headers, or sending or
 *     draining a body) without having authenticated: the one waiting
 *     longest is closed to make room. A client with a key therefore gets in
 *     while thousands of half-open connections are held (it authenticates
 *     as soon as its headers are in, and is then the newest of the waiting
 *     ones, the last to go), and the holder cannot keep more than the cap.
 *     Only when every counted connection is being served is a new one
 *     refused;
 *   - deadlines per phase (http_int.h), checked by a sweeper thread every
 *     quarter second and on every body chunk: the request line and headers
 *     within header_timeout_s (for a connection that authenticated before,
 *     the wait for its next request is idle_timeout_s); a body averaging
 *     min_body_rate bytes/s after header_timeout_s of grace; a refused
 *     body's drain within drain_timeout_s, then at min_body_rate.
 *
 * MHD's own idle timeout restarts with every byte, so a client trickling a
 * byte every few seconds defeats it; these deadlines do not restart.
 *
 * A connection is closed by shutting its socket down: its MHD thread sees
 * the end of the stream and closes it. MHD reports a connection closed
 * (MHD_CONNECTION_NOTIFY_CLOSED) before it closes the descriptor, and the record leaves the
 * list under the same lock the sweeper holds, so the guard never touches a
 * descriptor that was closed and reused.
 */
#define _GNU_SOURCE
#include "http/http_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_EVERY_MS 250

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr *b)
{
    if (a->ss_family != b->sa_family) return 0;
    if (b->sa_family == AF_INET)
        return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
    if (b->sa_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return 0;
}

static const char *overdue_locked(const mb_http_server *srv, const mb_http_conn *hc,
                                  int64_t now)
{
    const mb_http_opts *o = &srv->opts;
    int64_t age = now - hc->since_ms;
    double rate_ms = o->min_body_rate ? (double)hc->bytes * 1000.0 / (double)o->min_body_rate
                                      : -1;
    switch (hc->phase) {
    case MB_HTTP_WAIT:
        if (hc->authenticated) return age > (int64_t)o->idle_timeout_s * 1000 ? "idle" : NULL;
        return age > (int64_t)o->header_timeout_s * 1000 ? "request headers too slow" : NULL;
    case MB_HTTP_BODY:
        if (rate_ms < 0) return NULL;
        return (double)age > (double)o->header_timeout_s * 1000.0 + rate_ms
                   ? "request body too slow" : NULL;
    case MB_HTTP_DRAIN:
        return (double)age > (double)o->drain_timeout_s * 1000.0 + (rate_ms < 0 ? 0 : rate_ms)
                   ? "refused body still arriving" : NULL;
    case MB_HTTP_BUSY:
        return NULL;
    }
    return NULL;
}

static void doom_locked(mb_http_server *srv, mb_http_conn *hc, const char *why)
{
    mb_assert_held(&srv->lock);
    if (hc->doomed) return;
    hc->doomed = 1;
    if (!hc->authenticated) srv->n_anon--;
    if (hc->fd >= 0) shutdown(hc->fd, SHUT_RDWR);
    mb_debug("http: closing a connection from %s: %s", hc->ip, why);
}

/* May a new connection take this one's place? */
static int evictable(const mb_http_conn *hc)
{
    return !hc->doomed && !hc->authenticated && hc->phase != MB_HTTP_BUSY;
}

enum MHD_Result mb_http__accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    mb_http_server *srv = cls;
    if (!addr || len < sizeof(struct sockaddr_in)) return MHD_YES;
    enum MHD_Result ok = MHD_YES;
    pthread_mutex_lock(&srv->lock);
    unsigned from_ip = 0;
    mb_http_conn *ip_victim = NULL, *victim = NULL;
    for (mb_http_conn *hc = srv->head; hc; hc = hc->next) {
        if (hc->doomed) continue;
        int same = same_addr(&hc->addr, addr);
        from_ip += (unsigned)same;
        if (!evictable(hc)) continue;
        if (same && (!ip_victim || hc->since_ms < ip_victim->since_ms)) ip_victim = hc;
        if (!victim || hc->since_ms < victim->since_ms) victim = hc;
    }
    if (srv->opts.max_conn_per_ip && from_ip >= srv->opts.max_conn_per_ip) {
        if (ip_victim) {
            doom_locked(srv, ip_victim, "room for a new connection from the same address");
            if (victim == ip_victim) victim = NULL;
        } else {
            ok = MHD_NO;
        }
    }
    if (ok == MHD_YES && srv->n_anon >= srv->opts.max_anon_conns) {
        if (victim) doom_locked(srv, victim, "room for a new connection");
        else ok = MHD_NO;
    }
    pthread_mutex_unlock(&srv->lock);
    return ok;
}

void mb_http__notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode code)
{
    mb_http_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        mb_http_conn *hc = mb_calloc(1, sizeof *hc);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        hc->fd = ci ? ci->connect_fd : -1;
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ci ? ci->client_addr : NULL;
        if (sa && sa->sa_family == AF_INET) {
            memcpy(&hc->addr, sa, sizeof(struct sockaddr_in));
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, hc->ip, sizeof hc->ip);
        } else if (sa && sa->sa_family == AF_INET6) {
            memcpy(&hc->addr, sa, sizeof(struct sockaddr_in6));
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, hc->ip,
                      sizeof hc->ip);
        } else {
            snprintf(hc->ip, sizeof hc->ip, "?");
        }
        hc->phase = MB_HTTP_WAIT;
        hc->since_ms = mb_mono_ms();
        pthread_mutex_lock(&srv->lock);
        hc->prev = srv->tail;
        if (srv->tail) srv->tail->next = hc;
        else srv->head = hc;
        srv->tail = hc;
        srv->n_anon++;
        pthread_mutex_unlock(&srv->lock);
        *socket_context = hc;
        return;
    }
    mb_http_conn *hc = *socket_context;
    if (code != MHD_CONNECTION_NOTIFY_CLOSED || !hc) return;
    pthread_mutex_lock(&srv->lock);
    if (hc->prev) hc->prev->next = hc->next;
    else srv->head = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    else srv->tail = hc->prev;
    if (!hc->doomed && !hc->authenticated) srv->n_anon--;
    pthread_mutex_unlock(&srv->lock);
    *socket_context = NULL;
    free(hc);
}

mb_http_conn *mb_http__conn(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void mb_http__phase(mb_http_server *srv, mb_http_conn *hc, mb_http_phase phase)
{
    if (!hc) return;
    pthread_mutex_lock(&srv->lock);
    hc->phase = phase;
    hc->since_ms = mb_mono_ms();
    hc->bytes = 0;
    pthread_mutex_unlock(&srv->lock);
}

void mb_http__progress(mb_http_server *srv, mb_http_conn *hc, uint64_t bytes)
{
    if (!hc) return;
    pthread_mutex_lock(&srv->lock);
    hc->bytes += bytes;
    pthread_mutex_unlock(&srv->lock);
}

void mb_http__authenticated(mb_http_server *srv, mb_http_conn *hc)
{
    if (!hc) return;
    pthread_mutex_lock(&srv->lock);
    if (!hc->authenticated) {
        hc->authenticated = 1;
        if (!hc->doomed) srv->n_anon--;
    }
    pthread_mutex_unlock(&srv->lock);
}

const char *mb_http__overdue(mb_http_server *srv, mb_http_conn *hc)
{
    if (!hc) return NULL;
    pthread_mutex_lock(&srv->lock);
    const char *why = overdue_locked(srv, hc, mb_mono_ms());
    pthread_mutex_unlock(&srv->lock);
    return why;
}

static void *sweeper(void *arg)
{
    mb_http_server *srv = arg;
    pthread_mutex_lock(&srv->lock);
    while (!srv->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += SWEEP_EVERY_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv->wake, &srv->lock, &ts);
        if (srv->stopping) break;
        int64_t now = mb_mono_ms();
        for (mb_http_conn *hc = srv->head; hc; hc = hc->next) {
            if (hc->doomed) continue;
            const char *why = overdue_locked(srv, hc, now);
            if (why) doom_locked(srv, hc, why);
        }
    }
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

int mb_http__guard_start(mb_http_server *srv, mb_err *err)
{
    int rc = pthread_create(&srv->sweeper, NULL, sweeper, srv);
    if (rc) return mb_err_sys(err, rc, "cannot start the connection guard");
    srv->sweeping = 1;
    return MB_OK;
}

void mb_http__guard_stop(mb_http_server *srv)
{
    if (!srv->sweeping) return;
    pthread_mutex_lock(&srv->lock);
    srv->stopping = 1;
    pthread_cond_signal(&srv->wake);
    pthread_mutex_unlock(&srv->lock);
    pthread_join(srv->sweeper, NULL);
    srv->sweeping = 0;
}
