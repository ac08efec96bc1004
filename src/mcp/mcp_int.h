/*
 * mcp_int.h - internals shared by the framework's files (server.c,
 * transport.c, result.c). Not for servers: they use mcp.h only.
 */
#ifndef MB_MCP_INT_H
#define MB_MCP_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "mcp/mcp.h"

/* One tools/call handed to a worker thread (workers.c). */
typedef struct mb_mcp_job {
    json_t *msg;             /* the request, owned */
    atomic_int cancelled;    /* set by the reading thread */
    int wake_fd;             /* eventfd, readable once cancelled */
    struct mb_mcp_job *prev, *next;
} mb_mcp_job;

typedef struct mb_mcp_workers mb_mcp_workers;

typedef struct mb_mcp_tool_entry {
    const mb_mcp_tool *def;
    json_t *input;       /* parsed input_schema */
    json_t *output;      /* parsed output_schema or NULL */
    json_t *annotations; /* parsed annotations or NULL */
    json_t *meta;        /* "_meta" of tools/list, or NULL */
} mb_mcp_tool_entry;

struct mb_mcp_server {
    const mb_mcp_info *info;
    mb_mcp_tool_entry *tools;
    size_t ntools, captools;
    json_t *capabilities;
    void *data;
    void (*free_data)(void *);
    size_t max_message;
    int log_level;      /* lowest mb_mcp_level sent; -1 until setLevel */
    char protocol[32];  /* negotiated protocol version, "" before initialize */

    /* Transport. Exactly one of out_fd >= 0 / out_buf != NULL while serving. */
    int in_fd, out_fd;
    mb_buf *out_buf;
    int out_broken;
    mb_buf inbuf;     /* bytes read but not yet split into lines */
    mb_buf deferred;  /* complete lines read during a call, '\n'-terminated */
    int eof;
    int discarding;   /* dropping the rest of an oversized line */
    mb_mcp_call *current; /* the tools/call running on the reading thread, if any */
    pthread_mutex_t out_lock; /* one message at a time on out_fd / out_buf */
    mb_mcp_workers *workers;  /* NULL until the first concurrent call */
};

struct mb_mcp_call {
    mb_mcp_server *srv;
    const char *tool;
    json_t *id;             /* borrowed from the request */
    json_t *progress_token; /* borrowed, or NULL */
    json_t *headers;        /* params._meta[MB_MCP_META_HEADERS], borrowed, or NULL */
    int cancelled;
    mb_mcp_job *job;        /* set when running on a worker thread */
};

enum { MB_RES_OK = 0, MB_RES_FAIL = 1, MB_RES_RPC = 2 };

struct mb_mcp_result {
    json_t *content;    /* array of content blocks */
    json_t *structured; /* or NULL */
    int is_error;
    int state;          /* MB_RES_* */
    int rpc_code;
    char *msg;          /* failure message (MB_RES_FAIL / MB_RES_RPC) */
};

/* server.c */
json_t *mb_mcp__dispatch(mb_mcp_server *srv, json_t *msg);
json_t *mb_mcp__error(json_t *id, int code, const char *message);

/* Runs the tools/call request of a job (worker threads). */
json_t *mb_mcp__call_tool(mb_mcp_server *srv, mb_mcp_job *job);

/* workers.c */
int mb_mcp__workers_enabled(const mb_mcp_server *srv);
void mb_mcp__workers_submit(mb_mcp_server *srv, json_t *msg); /* msg borrowed */
void mb_mcp__workers_cancel(mb_mcp_server *srv, const json_t *request_id);
void mb_mcp__workers_finish(mb_mcp_server *srv); /* cancels, drains, joins */

/* transport.c */
void mb_mcp__send(mb_mcp_server *srv, json_t *msg); /* steals msg */
void mb_mcp__process_line(mb_mcp_server *srv, const char *line, size_t len);
void mb_mcp__pump_input(mb_mcp_server *srv);

/* result.c */
void mb_mcp__result_init(mb_mcp_result *res);
void mb_mcp__result_dispose(mb_mcp_result *res);

#endif /* MB_MCP_INT_H */
