#!/usr/bin/python3
"""bench/scale.py: many nodes against one (docs/SCALE.md "Figures").

  bench/scale.py [--acquires N] [--calls N] [--burst N] [--concurrency C]

With the optimized build (build/mcpbox), a throwaway PostgreSQL
(tests/pg/pgctl) and the harness of tests/integration/test_scale.py:
  1. one node (--node 0, no router): acquire latency (one filesystem server,
     one after another), tool-call latency (read_text_file on one session),
     and acquire throughput (a burst of sandboxes without servers, C in
     flight);
  2. three nodes behind nginx (deploy/nginx/mcpbox.conf): the same through
     the router, tool calls also sent to a node that is not the owner (it
     forwards: router hop + node hop), and the same burst.
Prints one line per figure and a JSON document. Not part of bench/run: it
starts its own cluster and takes about two minutes."""
import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("MCPBOX_BIN", os.path.join(ROOT, "build", "mcpbox"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import httpx  # noqa: E402
import test_scale as T  # noqa: E402


def lat(values):
    v = sorted(values)
    return {"n": len(v), "p50_ms": round(v[len(v) // 2] * 1000, 2),
            "p90_ms": round(v[(len(v) * 9) // 10] * 1000, 2),
            "mean_ms": round(statistics.mean(v) * 1000, 2)}


def measure(cluster, args, label, out):
    res = {}
    with cluster.client() as c:
        times, ids = [], []
        for _ in range(args.acquires):
            t0 = time.perf_counter()
            sb = T.acquire(c)
            times.append(time.perf_counter() - t0)
            ids.append(sb)
        res["acquire"] = lat(times)
        sb = ids[0]
        sid, url = sb["local_sandbox_id"], sb["servers"][0]["mcp_server_url"]
        targets = {"direct" if len(cluster.nodes) == 1 else "router": url}
        if len(cluster.nodes) > 1:
            other = cluster.nodes[(T.owner(sid) + 1) % len(cluster.nodes)]
            owner = cluster.nodes[T.owner(sid)]
            targets["owner direct"] = url.replace(cluster.router, owner.url)
            targets["other node (forwards)"] = url.replace(cluster.router, other.url)
        # One keep-alive client and session per target, the calls interleaved
        # (target 1, 2, 3, 1, 2, 3, ...) so that a change of load on the shared
        # machine falls on every target alike.
        # http.client sends a small request in one write; httpx 0.23 writes the
        # head and the body apart, and Nagle's algorithm against the server's
        # delayed ACK then adds ~40 ms to every call (measured: 44 ms p50
        # through httpx, 0.4 ms through http.client, same daemon and call).
        clients = {name: http.client.HTTPConnection(httpx.URL(u).host, httpx.URL(u).port,
                                                    timeout=60)
                   for name, u in targets.items()}
        sessions = {name: T.mcp_session(u, sid) for name, u in targets.items()}
        times = {name: [] for name in targets}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "list_allowed_directories",
                                      "arguments": {}}}).encode()
        for i in range(args.calls):
            for name, u in targets.items():
                h = {"Accept": "application/json, text/event-stream",
                     "Content-Type": "application/json",
                     "Mcp-Session-Id": sessions[name], "MCP-Protocol-Version": "2025-06-18"}
                t0 = time.perf_counter()
                clients[name].request("POST", httpx.URL(u).raw_path.decode(), body=body,
                                      headers=h)
                r = clients[name].getresponse()
                text = r.read().decode()
                times[name].append(time.perf_counter() - t0)
                assert r.status == 200 and "/data" in text, text
        for name in targets:
            clients[name].close()
            res["call " + name] = lat(times[name])
        for sb in ids:
            c.delete("/local-sandbox/" + sb["local_sandbox_id"])

        def one(_):
            with cluster.client() as cc:
                return T.acquire(cc, servers=())["local_sandbox_id"]

        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as ex:
            burst = list(ex.map(one, range(args.burst)))
        took = time.perf_counter() - t0
        res["burst"] = {"n": args.burst, "seconds": round(took, 2),
                        "per_s": round(args.burst / took, 2),
                        "per_node": [sum(1 for i in burst if T.owner(i) == n.ordinal)
                                     for n in cluster.nodes]}
        with ThreadPoolExecutor(args.concurrency) as ex:
            list(ex.map(lambda i: httpx.delete(cluster.router + "/local-sandbox/" + i,
                                               headers=T.AUTH, timeout=120), burst))
    for k, v in res.items():
        print("%-12s %-24s %s" % (label, k, json.dumps(v)))
    out[label] = res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--acquires", type=int, default=20)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--burst", type=int, default=60)
    ap.add_argument("--concurrency", type=int, default=6)
    args = ap.parse_args()
    out = {"machine": "%d cores, load average %.1f at start" % (os.cpu_count(), os.getloadavg()[0]),
           "args": vars(args)}
    print(out["machine"])
    for label, n, router in (("1 node", 1, False), ("3 nodes", 3, True)):
        root = tempfile.mkdtemp(prefix="mcpbox-scalebench-")
        c = T.Cluster(root, n=n, router=router)
        try:
            c.start()
            time.sleep(1.5)  # every node has heartbeated
            measure(c, args, label, out)
        finally:
            c.close()
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
