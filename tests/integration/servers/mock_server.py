#!/usr/bin/env python3
"""A tiny stdio MCP server for the gateway tests, well-behaved or not on demand.

Requests are handled on threads (like real servers, several calls may be in
flight at once); every line written to stdout holds the write lock.

State that sessions can observe: `counter` increments a per-process counter
and reports it with the pid and a random per-process token, so a test can
tell that every session reached the same single process; `clients` lists the
clientInfo names of the gateway's notifications/mcpbox/client_initialized in
the order they came.

Misbehaviour, per tool: `garbage` (non-JSON-RPC lines on stdout), `flood`
(megabytes of junk), `huge` (a result over any sane limit), `exit` (dies
mid-call), `hang` (never answers), `wedge` (blocks the thread that reads
stdin, so not even ping is answered), `double` (answers twice), `stray` (a
response to an id nobody sent). At start-up, per flag: --banner (prints a
non-JSON line first), --crash-at-start, --no-init (never answers
initialize), --refuse-init.
"""
import json
import os
import secrets
import sys
import threading
import time

TOKEN = secrets.token_hex(8)
ARGS = set(sys.argv[1:])
out_lock = threading.Lock()
state_lock = threading.Lock()
counter = 0
cancelled = []
clients = []  # clientInfo.name of each notifications/mcpbox/client_initialized, in order
waiting = {}  # our request id -> [event, response]
next_req = 0


def write_raw(text):
    with out_lock:
        sys.stdout.write(text)
        sys.stdout.flush()


def send(msg):
    write_raw(json.dumps(msg, separators=(",", ":")) + "\n")


def result(rid, res):
    send({"jsonrpc": "2.0", "id": rid, "result": res})


def text(rid, t, **extra):
    r = {"content": [{"type": "text", "text": t}]}
    r.update(extra)
    result(rid, r)


def ask_client(method, params, timeout=20):
    """Sends a request to the client and waits for its answer."""
    global next_req
    with state_lock:
        next_req += 1
        rid = "srv-%d" % next_req
        ev = threading.Event()
        waiting[rid] = [ev, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    if not ev.wait(timeout):
        return {"error": "client did not answer"}
    with state_lock:
        return waiting.pop(rid)[1]


TOOLS = [
    {"name": n, "description": d, "inputSchema": {"type": "object", "properties": p}}
    for n, d, p in [
        ("counter", "increments the process counter", {}),
        ("echo", "echoes text", {"text": {"type": "string"}}),
        ("sleep", "answers after ms", {"ms": {"type": "number"}}),
        ("progress", "sends progress notifications", {"steps": {"type": "integer"}}),
        ("log", "sends a log notification", {}),
        ("garbage", "prints garbage on stdout first", {}),
        ("flood", "prints megabytes of junk on stdout first", {"mb": {"type": "number"}}),
        ("huge", "answers with a result of `bytes` bytes", {"bytes": {"type": "integer"}}),
        ("exit", "exits mid-call", {}),
        ("hang", "never answers", {}),
        ("double", "answers twice", {}),
        ("stray", "sends a response to an id nobody sent", {}),
        ("sample", "asks the client for a sampling completion", {}),
        ("roots", "asks the client for its roots", {}),
        ("cancelled", "lists the request ids cancelled so far", {}),
        ("stderr", "writes lines to stderr", {}),
        ("numbers", "answers with awkward numbers", {}),
        ("notify", "sends list_changed notifications, then answers", {}),
        ("clients", "lists the clients the gateway said connected, in order", {}),
    ]
]


def call_tool(rid, params):
    global counter
    name = params.get("name")
    args = params.get("arguments") or {}
    meta = params.get("_meta") or {}
    if name == "counter":
        with state_lock:
            counter += 1
            n = counter
        text(rid, "count=%d pid=%d token=%s" % (n, os.getpid(), TOKEN))
    elif name == "clients":
        with state_lock:
            text(rid, json.dumps(clients))
    elif name == "echo":
        # show_meta: the request's _meta as this server read it (forwarded headers)
        text(rid, json.dumps(meta, sort_keys=True) if args.get("show_meta")
             else args.get("text", ""))
    elif name == "sleep":
        time.sleep(float(args.get("ms", 100)) / 1000)
        text(rid, "slept")
    elif name == "progress":
        steps = int(args.get("steps", 3))
        tok = meta.get("progressToken")
        for i in range(steps):
            if tok is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": tok, "progress": i + 1, "total": steps}})
            time.sleep(0.05)
        text(rid, "done %d steps" % steps)
    elif name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "mock", "data": "hello from the log"}})
        time.sleep(0.05)
        text(rid, "logged")
    elif name == "garbage":
        write_raw("this is not json\n")
        write_raw("{broken json\n")
        write_raw('{"jsonrpc":"2.0","hello":"not a message"}\n')
        write_raw("[1,2,3]\n")
        write_raw("\x00\x01\x02 binary junk \xff\n")
        write_raw('{"jsonrpc":"2.0","id":123456789,"result":{}}\n')
        text(rid, "after garbage")
    elif name == "flood":
        mb = float(args.get("mb", 8))
        line = "x" * 1023 + "\n"
        with out_lock:
            for _ in range(int(mb * 1024)):
                sys.stdout.write(line)
            sys.stdout.write("y" * int(mb * 1024 * 1024) + "\n")  # one enormous line
            sys.stdout.flush()
        text(rid, "after flood")
    elif name == "huge":
        text(rid, "z" * int(args.get("bytes", 1 << 20)))
    elif name == "exit":
        sys.stdout.flush()
        os._exit(3)
    elif name == "hang":
        return
    elif name == "double":
        text(rid, "first")
        text(rid, "second")
    elif name == "stray":
        send({"jsonrpc": "2.0", "id": 987654321, "result": {"content": []}})
        send({"jsonrpc": "2.0", "id": "nobody", "error": {"code": 1, "message": "x"}})
        text(rid, "after stray")
    elif name == "sample":
        r = ask_client("sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10})
        text(rid, "sampled: " + json.dumps(r, sort_keys=True))
    elif name == "roots":
        r = ask_client("roots/list", {})
        text(rid, "roots: " + json.dumps(r, sort_keys=True))
    elif name == "cancelled":
        with state_lock:
            text(rid, json.dumps(cancelled))
    elif name == "stderr":
        for i in range(3):
            sys.stderr.write("mock stderr line %d\n" % i)
        sys.stderr.flush()
        text(rid, "wrote stderr")
    elif name == "numbers":
        write_raw('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"n"}],'
                  '"structuredContent":{"a":0.1,"big":123456789012345678901234567890,'
                  '"e":1e400}}}\n' % json.dumps(rid))
    elif name == "notify":
        send({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        text(rid, "notified")
    else:
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": -32602, "message": "unknown tool %s" % name}})


def handle(msg):
    method = msg.get("method")
    rid = msg.get("id")
    if method is None:
        # a response to one of our requests
        with state_lock:
            w = waiting.get(rid)
            if w:
                w[1] = msg.get("result", {"error": msg.get("error")})
                w[0].set()
        return
    if rid is None:
        if method == "notifications/cancelled":
            with state_lock:
                cancelled.append((msg.get("params") or {}).get("requestId"))
        elif method == "notifications/mcpbox/client_initialized":
            with state_lock:
                clients.append(((msg.get("params") or {}).get("clientInfo") or {}).get("name"))
        return
    if method == "initialize":
        if "--no-init" in ARGS:
            return
        if "--refuse-init" in ARGS:
            send({"jsonrpc": "2.0", "id": rid,
                  "error": {"code": -32603, "message": "mock refuses to initialize"}})
            return
        result(rid, {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                     "capabilities": {"tools": {}, "logging": {}},
                     "serverInfo": {"name": "mock-server", "version": "1.2.3"}})
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call" and (msg.get("params") or {}).get("name") == "wedge":
        time.sleep(3600)  # the reading thread itself is stuck: nothing is answered any more
    elif method == "tools/call":
        threading.Thread(target=call_tool, args=(rid, msg.get("params") or {}),
                         daemon=True).start()
    elif method == "ping":
        result(rid, {})
    else:
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": -32601, "message": "method not found: %s" % method}})


def main():
    if "--banner" in ARGS:
        write_raw("mock server starting (this banner is not JSON)\n")
    if "--crash-at-start" in ARGS:
        sys.stderr.write("mock: crashing at start as asked\n")
        sys.exit(7)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        handle(msg)


if __name__ == "__main__":
    main()
