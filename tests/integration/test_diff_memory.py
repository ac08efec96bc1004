"""Differential test: `mcpbox mcp localmemory [--upstream-version V]` against
the npm reference of the same version (tests/node), side by side on copies of
the same knowledge-graph file, for each version we reproduce:
  - 2025.8.4, the default (@modelcontextprotocol/server-memory, MCP-Atlas' pin);
  - 2025.4.25, Toolathlon's pin (npm alias server-memory-2025.4.25): the same
    server but for read_graph, which refuses a call without "arguments".

Every call goes to both servers; the whole answers (result or JSON-RPC error)
must be equal, and so must the two files afterwards. Documented differences,
left out of the comparison on purpose:
  - a malformed line in the file: V8's JSON.parse messages are not mimicked
    (tested separately, not differentially);
  - the older single-object JSON file is read by us (upstream fails).
"""
import json
import os
import random
import shutil

import pytest

from mcp_stdio import StdioClient

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NODE = os.path.join(ROOT, "tests", "node", "node22")
MODULES = os.path.join(ROOT, "tests", "node", "node_modules")
REF = os.path.join(MODULES, "@modelcontextprotocol", "server-memory", "dist", "index.js")
MCPBOX = os.environ.get("MCPBOX_BIN", os.path.join(ROOT, "build", "asan", "mcpbox"))

# version -> (the reference's entry point, our extra arguments)
VERSIONS = {
    "2025.8.4": (REF, []),
    "2025.4.25": (os.path.join(MODULES, "server-memory-2025.4.25", "dist", "index.js"),
                  ["--upstream-version", "2025.4.25"]),
}

pytestmark = pytest.mark.skipif(not (os.path.exists(NODE) and all(os.path.exists(r) for r, _ in VERSIONS.values())),
                                reason="Node peers missing: run scripts/install-node-tools")

SEED = "\n".join(json.dumps(x, separators=(",", ":")) for x in [
    {"type": "entity", "name": "Ada Lovelace", "entityType": "person",
     "observations": ["wrote the first program", "born 1815"]},
    {"type": "entity", "name": "Analytical Engine", "entityType": "machine",
     "observations": ["designed by Babbage"]},
    {"type": "entity", "name": "Charles Babbage", "entityType": "person", "observations": []},
    {"type": "relation", "from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "wrote about"},
    {"type": "relation", "from": "Charles Babbage", "to": "Analytical Engine", "relationType": "designed"},
]) + "\n\n"

# (tool, arguments); arguments None means the request carries no "arguments".
CALLS = [
    ("read_graph", None),
    ("read_graph", {}),
    ("search_nodes", {"query": "engine"}),
    ("search_nodes", {"query": "PERSON"}),
    ("search_nodes", {"query": "1815"}),
    ("search_nodes", {"query": ""}),
    ("search_nodes", {"query": "nothing like this"}),
    ("open_nodes", {"names": ["Ada Lovelace", "Analytical Engine"]}),
    ("open_nodes", {"names": ["Charles Babbage"]}),
    ("open_nodes", {"names": []}),
    ("open_nodes", {"names": ["nobody"]}),
    ("create_entities", {"entities": [
        {"name": "Grace Hopper", "entityType": "person", "observations": ["COBOL", "compiler"]},
        {"name": "Ada Lovelace", "entityType": "person", "observations": ["duplicate"]},
        {"name": "UNIVAC", "entityType": "machine", "observations": []}]}),
    ("create_entities", {"entities": []}),
    ("create_entities", {"entities": [{"name": "Grace Hopper", "entityType": "x", "observations": []}]}),
    ("create_entities", {"entities": [{"name": "Zuse", "entityType": "person",
                                       "observations": ["Z3"], "extra": {"k": [1, 2.5, True, None]}}]}),
    ("create_entities", {"entities": [{"name": "Twin", "entityType": "t", "observations": []},
                                      {"name": "Twin", "entityType": "t", "observations": []}]}),
    ("create_entities", {"entities": [{"name": "Ünïcödé ✓", "entityType": "名前", "observations": ["αβγ", "tab\there", "quote \" and \\ slash /"]}]}),
    ("create_relations", {"relations": [
        {"from": "Grace Hopper", "to": "UNIVAC", "relationType": "programmed"},
        {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "wrote about"}]}),
    ("create_relations", {"relations": [{"from": "Grace Hopper", "to": "Nowhere", "relationType": "visited"}]}),
    ("create_relations", {"relations": []}),
    ("add_observations", {"observations": [{"entityName": "Grace Hopper", "contents": ["Navy", "COBOL", "Navy"]}]}),
    ("add_observations", {"observations": [{"entityName": "UNIVAC", "contents": []}]}),
    ("add_observations", {"observations": [{"entityName": "Charles Babbage", "contents": ["Difference Engine"]},
                                           {"entityName": "Ghost", "contents": ["boo"]}]}),
    ("add_observations", {"observations": [{"entityName": "Ghost", "contents": ["boo"]}]}),
    ("add_observations", {"observations": []}),
    ("search_nodes", {"query": "navy"}),
    ("search_nodes", {"query": "ü"}),
    ("search_nodes", {"query": "Ü"}),
    ("open_nodes", {"names": ["Grace Hopper", "UNIVAC", "Nowhere"]}),
    ("read_graph", {}),
    ("delete_observations", {"deletions": [{"entityName": "Grace Hopper", "observations": ["Navy", "absent"]}]}),
    ("delete_observations", {"deletions": [{"entityName": "Ghost", "observations": ["x"]}]}),
    ("delete_observations", {"deletions": []}),
    ("delete_relations", {"relations": [{"from": "Grace Hopper", "to": "Nowhere", "relationType": "visited"}]}),
    ("delete_relations", {"relations": [{"from": "nobody", "to": "nothing", "relationType": "none"}]}),
    ("delete_entities", {"entityNames": ["UNIVAC", "nobody"]}),
    ("read_graph", {}),
    ("delete_entities", {"entityNames": []}),
    # invalid calls: upstream validates nothing, so these are JavaScript's TypeErrors
    ("create_entities", {}),
    ("create_entities", None),
    ("create_entities", {"entities": "Ada"}),
    ("create_entities", {"entities": None}),
    ("create_entities", {"entities": {"name": "x"}}),
    ("create_entities", {"entities": [None]}),
    ("create_relations", {}),
    ("create_relations", {"relations": 5}),
    ("create_relations", {"relations": [None]}),
    ("add_observations", {}),
    ("add_observations", {"observations": "x"}),
    ("add_observations", {"observations": [{"entityName": "Grace Hopper"}]}),
    ("add_observations", {"observations": [{"entityName": "Grace Hopper", "contents": "str"}]}),
    ("add_observations", {"observations": [None]}),
    ("add_observations", {"observations": [{"contents": ["x"]}]}),
    ("delete_entities", {}),
    ("delete_entities", None),
    ("delete_entities", {"entityNames": "Grace"}),
    ("delete_observations", {}),
    ("delete_observations", {"deletions": [{"entityName": "Grace Hopper"}]}),
    ("delete_relations", {}),
    ("delete_relations", {"relations": None}),
    ("search_nodes", {}),
    ("search_nodes", {"query": 5}),
    ("search_nodes", None),
    ("open_nodes", {}),
    ("open_nodes", {"names": "Grace Hopper"}),
    ("no_such_tool", {}),
    ("no_such_tool", None),
    ("read_graph", {"ignored": True}),
]


def generated_calls(seed=5, n=170):
    """A seeded random walk over the graph: valid changes and queries, with
    calls that throw (unknown entities, arguments of the wrong type, no
    arguments, unknown tools) mixed in. Nothing malformed is ever saved, so
    the graph stays usable to the end."""
    rnd = random.Random(seed)
    names = ["Ada Lovelace", "Grace Hopper", "Zuse", "Alan Turing", "ENIAC", "Ünïcödé ✓", "x", "", "Ghost"]
    types = ["person", "machine", "名前", ""]
    words = ["COBOL", "Navy", "compiler", "Z3", "ü", "", "born 1815", "quote \" \\", "tab\there", "Ω"]
    rtypes = ["programmed", "designed", "met", "wrote about"]

    def obs():
        return rnd.sample(words, rnd.randint(0, 3))

    def rel():
        return {"from": rnd.choice(names), "to": rnd.choice(names), "relationType": rnd.choice(rtypes)}

    bad = [5, "str", None, True, {"k": 1}, [None], [5], [{"entityName": 3, "contents": [1]}]]
    tools = ["create_entities", "create_relations", "add_observations", "delete_entities",
             "delete_observations", "delete_relations", "search_nodes", "open_nodes", "read_graph"]
    keys = {"create_entities": "entities", "create_relations": "relations", "add_observations": "observations",
            "delete_entities": "entityNames", "delete_observations": "deletions", "delete_relations": "relations",
            "search_nodes": "query", "open_nodes": "names", "read_graph": "x"}
    out = []
    for _ in range(n):
        k = rnd.randrange(12)
        if k == 0:
            out.append(("create_entities", {"entities": [
                {"name": rnd.choice(names), "entityType": rnd.choice(types), "observations": obs()}
                for _ in range(rnd.randint(1, 3))]}))
        elif k == 1:
            out.append(("create_relations", {"relations": [rel() for _ in range(rnd.randint(1, 3))]}))
        elif k == 2:
            out.append(("add_observations", {"observations": [
                {"entityName": rnd.choice(names), "contents": obs()} for _ in range(rnd.randint(1, 2))]}))
        elif k == 3:
            out.append(("delete_observations", {"deletions": [
                {"entityName": rnd.choice(names), "observations": obs()}]}))
        elif k == 4:
            out.append(("delete_relations", {"relations": [rel() for _ in range(rnd.randint(1, 2))]}))
        elif k == 5:
            out.append(("delete_entities", {"entityNames": rnd.sample(names, rnd.randint(0, 2))}))
        elif k == 6:
            q = rnd.choice(words + names)
            out.append(("search_nodes", {"query": q.upper() if rnd.random() < 0.3 else q}))
        elif k == 7:
            out.append(("open_nodes", {"names": rnd.sample(names, rnd.randint(0, 3))}))
        elif k == 8:
            out.append(("read_graph", rnd.choice([{}, None, {"x": 1}])))
        elif k in (9, 10):
            t = rnd.choice(tools)
            out.append((t, {keys[t]: rnd.choice(bad)}))
        else:
            out.append((rnd.choice(tools + ["nope", "read_text_file"]), None))
    return out


def _answer(client, name, args):
    params = {"name": name}
    if args is not None:
        params["arguments"] = args
    m = client.request("tools/call", params)
    m.pop("jsonrpc", None)
    m.pop("id", None)
    return m


@pytest.fixture(params=list(VERSIONS))
def pair(tmp_path, request):
    ref_js, extra = VERSIONS[request.param]
    files = []
    clients = []
    for side in ("ref", "ours"):
        d = tmp_path / side
        d.mkdir()
        f = d / "memory.jsonl"
        f.write_text(SEED)
        files.append(f)
    ref = StdioClient([NODE, ref_js], env={"MEMORY_FILE_PATH": str(files[0])})
    ours = StdioClient([MCPBOX, "mcp", "localmemory", *extra], env={"MEMORY_FILE_PATH": str(files[1])})
    clients = [ref, ours]
    try:
        yield clients, files
    finally:
        for c in clients:
            c.close()


def test_tools_list_equal(pair):
    (ref, ours), _ = pair
    ri, oi = ref.initialize("2024-11-05"), ours.initialize("2024-11-05")
    assert ri["serverInfo"] == oi["serverInfo"] == {"name": "memory-server", "version": "0.6.3"}
    assert ri["capabilities"] == oi["capabilities"]
    assert ri["protocolVersion"] == oi["protocolVersion"] == "2024-11-05"
    # SDK 1.0.1 knows nothing newer, and answers a newer request with 2024-11-05
    for proto in ("2025-06-18", "2025-11-25"):
        assert ref.result("initialize", {"protocolVersion": proto, "capabilities": {},
                                         "clientInfo": {"name": "t", "version": "1"}}) == \
            ours.result("initialize", {"protocolVersion": proto, "capabilities": {},
                                       "clientInfo": {"name": "t", "version": "1"}})
    rt, ot = ref.list_tools(), ours.list_tools()
    assert [t["name"] for t in rt] == [t["name"] for t in ot]
    assert len(ot) == 9
    for a, b in zip(rt, ot):
        assert a == b  # name, description and inputSchema, nothing else


def test_calls_identical(pair):
    (ref, ours), (rf, of) = pair
    ref.initialize("2024-11-05")
    ours.initialize("2024-11-05")
    seq = CALLS + generated_calls()
    assert len(seq) >= 200
    for name, args in seq:
        a, b = _answer(ref, name, args), _answer(ours, name, args)
        assert a == b, f"{name} {args}"
        assert rf.read_bytes() == of.read_bytes(), f"files differ after {name} {args}"
    # a few protocol-level answers
    for method, params in [("ping", {}), ("tools/list", {"cursor": "x"}), ("resources/list", {}),
                           ("logging/setLevel", {"level": "debug"})]:
        a, b = ref.request(method, params), ours.request(method, params)
        assert {k: v for k, v in a.items() if k != "jsonrpc"} == {k: v for k, v in b.items() if k != "jsonrpc"}, method
    assert ref.close() == 0 and ours.close() == 0, ours.stderr()


def test_changes_made_outside_are_seen(pair):
    """The server keeps its last parse while the file is unchanged; every kind
    of outside change must still show at once, as upstream re-reads each time:
    same-size edits with the old mtime put back, replacement by rename,
    removal, and our own writes followed by outside ones."""
    (ref, ours), (rf, of) = pair
    ref.initialize("2024-11-05")
    ours.initialize("2024-11-05")

    def both(name, args):
        a, b = _answer(ref, name, args), _answer(ours, name, args)
        assert a == b, (name, args, a, b)
        return b

    def edit(fn):
        for f in (rf, of):
            fn(f)

    first = both("read_graph", {})
    both("search_nodes", {"query": ""})

    def same_size_same_mtime(f):
        st = os.stat(f)
        text = f.read_text()
        swapped = text.replace('"entityType":"', '"entityType":"X', 1)[:-1] if '"entityType":"' in text else text
        assert len(swapped) == len(text)
        f.write_text(swapped)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    edit(same_size_same_mtime)
    second = both("read_graph", {})
    assert second != first

    def replace_by_rename(f):
        tmp = f.with_suffix(".new")
        tmp.write_text('{"type":"entity","name":"renamed","entityType":"t","observations":[]}')
        os.replace(tmp, f)
    edit(replace_by_rename)
    assert "renamed" in json.dumps(both("open_nodes", {"names": ["renamed"]}))

    both("create_entities", {"entities": [{"name": "ours", "entityType": "t", "observations": []}]})
    both("read_graph", {})
    edit(lambda f: f.write_text(f.read_text() + '\n{"type":"entity","name":"appended","entityType":"t","observations":[]}'))
    assert "appended" in json.dumps(both("search_nodes", {"query": "appended"}))

    edit(lambda f: f.unlink())
    both("read_graph", {})
    both("search_nodes", {"query": "renamed"})


def test_missing_file_then_created(tmp_path):
    f = tmp_path / "sub" / "new.jsonl"
    with StdioClient([MCPBOX, "mcp", "localmemory", "--memory-file", str(f)]) as c:
        c.initialize()
        assert json.loads(StdioClient.text(c.call("read_graph", {}))) == {"entities": [], "relations": []}
        # upstream does not create directories: the write fails with Node's text
        m = c.request("tools/call", {"name": "create_entities", "arguments": {
            "entities": [{"name": "a", "entityType": "t", "observations": []}]}})
        assert m["error"] == {"code": -32603,
                              "message": f"ENOENT: no such file or directory, open '{f}'"}
        f.parent.mkdir()
        r = c.call("create_entities", {"entities": [{"name": "a", "entityType": "t", "observations": []}]})
        assert json.loads(StdioClient.text(r)) == [{"name": "a", "entityType": "t", "observations": []}]
    assert f.read_text() == '{"type":"entity","name":"a","entityType":"t","observations":[]}'


def test_old_json_document_is_read(tmp_path):
    f = tmp_path / "memory.json"
    f.write_text(json.dumps({"entities": [{"name": "Old", "entityType": "legacy", "observations": ["kept"]}],
                             "relations": [{"from": "Old", "to": "Old", "relationType": "self"}]}, indent=2))
    with StdioClient([MCPBOX, "mcp", "localmemory"], env={"MEMORY_FILE_PATH": str(f)}) as c:
        c.initialize()
        g = json.loads(StdioClient.text(c.call("read_graph", {})))
        assert g["entities"][0]["name"] == "Old" and g["relations"][0]["relationType"] == "self"
        c.call("add_observations", {"observations": [{"entityName": "Old", "contents": ["new"]}]})
    lines = [json.loads(x) for x in f.read_text().split("\n")]
    assert lines == [{"type": "entity", "name": "Old", "entityType": "legacy", "observations": ["kept", "new"]},
                     {"type": "relation", "from": "Old", "to": "Old", "relationType": "self"}]


def test_bad_line_is_reported(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text('{"type":"entity","name":"a","entityType":"t","observations":[]}\n{oops\n')
    with StdioClient([MCPBOX, "mcp", "localmemory"], env={"MEMORY_FILE_PATH": str(f)}) as c:
        c.initialize()
        m = c.request("tools/call", {"name": "read_graph", "arguments": {}})
        assert m["error"]["code"] == -32603 and "line 2" in m["error"]["message"]


def test_relative_path_is_beside_the_binary(tmp_path):
    name = f"mcpbox-test-memory-{os.getpid()}.jsonl"
    target = os.path.join(os.path.dirname(os.path.realpath(MCPBOX)), name)
    try:
        with StdioClient([MCPBOX, "mcp", "localmemory"], env={"MEMORY_FILE_PATH": name}, cwd=str(tmp_path)) as c:
            c.initialize()
            c.call("create_entities", {"entities": [{"name": "r", "entityType": "t", "observations": []}]})
        assert os.path.exists(target)
        assert not os.path.exists(tmp_path / name)
    finally:
        if os.path.exists(target):
            os.unlink(target)
