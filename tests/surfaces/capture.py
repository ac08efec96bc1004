#!/usr/bin/python3
"""Records the tool surface of a stdio MCP server as a reference file:

    tests/surfaces/capture.py OUT.json --upstream "pkg ver" --source "where" \
        [--env K=V ...] [--cwd DIR] [--protocol 2025-06-18] -- COMMAND ARGS...

OUT.json gets {upstream, source, serverInfo, protocolVersion (the answer to
--protocol), tools} with the tools exactly as tools/list returned them. Used
for upstreams whose package is not installable here at test time (see
README.md in this folder for what was captured how)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from mcp_stdio import StdioClient  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--cwd")
    ap.add_argument("--protocol", default="2025-06-18")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("give the server's command after --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
    env = dict(kv.split("=", 1) for kv in a.env)
    with StdioClient(cmd, env=env, cwd=a.cwd) as c:
        init = c.initialize(protocol=a.protocol)
        tools = c.list_tools()
    ref = {"upstream": a.upstream, "source": a.source, "serverInfo": init["serverInfo"],
           "protocolVersion": init["protocolVersion"], "tools": tools}
    with open(a.out, "w") as f:
        json.dump(ref, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
