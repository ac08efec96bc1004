/*
 * playwright.h - the face of the playwright layer: `mcpbox playwright`, the
 * in-sandbox launcher of the real `@playwright/mcp` npm package (run by Node
 * with Debian's Chromium), and the pure text layer that turns 0.0.32 into
 * Toolathlon's `playwright_with_chunk` fork (span pagination of snapshots and
 * 7 snapshot tools).
 *
 * The launcher sits between the gateway and the Node process on stdio:
 *   - it starts the egress forwarder (src/egress) when the daemon gave the
 *     server a proxy socket, and hands Chromium `--proxy-server`;
 *   - it starts the browser before the server counts as ready: the answer to
 *     the gateway's first tools/list is held until a tab-list call (which
 *     launches Chromium) has returned, so a warm-pool sandbox has its browser
 *     up before it is claimed;
 *   - later tools/list requests are answered from the first answer (dropped
 *     when upstream says notifications/tools/list_changed);
 *   - the gateway's notifications/mcpbox/client_initialized (one per client
 *     session, which upstream ignores) is dropped instead of waking Node;
 *   - it watches the browser's process (browser.c): when it dies unasked (a
 *     crash, a kill), the launcher has upstream start a new one at once, the
 *     next tool call (or the one that was running) gets a clear error saying
 *     so, and the calls after it wait for the new browser and work;
 *   - with --with-chunk it applies the fork's layer (chunk.c) to tools/list,
 *     to every page-state block, and answers the 7 span tools itself.
 * Everything else passes through unchanged, byte for byte.
 */
#ifndef MB_PLAYWRIGHT_H
#define MB_PLAYWRIGHT_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/util.h"

/* ---- the fork's span layer (chunk.c), a pure state machine over texts */

typedef struct mb_pw_chunk mb_pw_chunk;

/* serverInfo.version of @lockon0927/playwright-mcp-with-chunk */
#define MB_PW_CHUNK_VERSION "0.1.2"

/* span_size: the fork's --span-size (-1 = the whole snapshot, no spans; 0 = 2000). */
mb_pw_chunk *mb_pw_chunk_new(int span_size);
void mb_pw_chunk_free(mb_pw_chunk *c);

/* Rewrites a tools/list result of 0.0.32 in place: the browser_snapshot
 * description, and the 7 tools inserted after browser_select_option. */
void mb_pw_chunk_tools(mb_pw_chunk *c, json_t *result);

/* Called with each upstream tools/call answer (its first text block), before
 * mb_pw_chunk_result_text: navigation and tab changes move or reset the
 * per-tab state as the fork's Tab does. */
void mb_pw_chunk_after_call(mb_pw_chunk *c, const char *tool, json_t *args, const char *text,
                            int is_error);

/* Rewrites the text of an upstream tools/call result: the snapshot inside its
 * page-state block becomes the current span of the current tab. Returns a
 * new string, or NULL when the text has no snapshot to rewrite. */
char *mb_pw_chunk_result_text(mb_pw_chunk *c, const char *tool, const char *text);

/* 1 if `tool` is one of the 7 span tools, which never reach upstream. */
int mb_pw_chunk_is_local(const char *tool);

/* Answers one of the 7 tools: a text, and *is_error for a failed validation
 * (with the SDK's texts). Returns a new string. */
char *mb_pw_chunk_call(mb_pw_chunk *c, const char *tool, json_t *args, int *is_error);

/* ---- the browser process (browser.c) */

/* The pid of the browser's main process, a direct child of `node` whose
 * executable is Chromium, or 0 when there is none. */
pid_t mb_pw_browser_pid(pid_t node);
/* A pidfd of `pid` (readable once it exits), or -1. */
int mb_pw_pidfd(pid_t pid);

#endif /* MB_PLAYWRIGHT_H */
