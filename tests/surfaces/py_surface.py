#!/usr/bin/python3
"""Reconstructs the tools/list of a Python MCP server from its source, the
way FastMCP and pydantic 2 build it, without installing either:

    git show v0.1.4:src/excel_mcp/server.py | \
        tests/surfaces/py_surface.py --mcp 1.9.0 --name excel-mcp \
            --upstream "excel-mcp-server 0.1.4" --source "..." > OUT.json

For every function decorated @mcp.tool() (or @mcp.tool(name=..., description=...)):
  - name: the decorator's name= or the function name;
  - description: the decorator's description= or the raw docstring
    (fn.__doc__, not cleaned), "" without one;
  - inputSchema: the pydantic model "<fn>Arguments" of the parameters:
    {"properties", "required", "title", "type": "object"}, each property with
    its title (field name, title-cased, "_" -> " "), its type's schema and its
    default when it has one; a parameter without default is required;
  - outputSchema (mcp >= 1.10 only: structured output): a "-> str" (or other
    plain type) return is wrapped as the model "<fn>Output" {result};
    a function without a return annotation gets none;
  - no title and no annotations (None is left out of the answer).
serverInfo is {name, version of the mcp package} (FastMCP gives the low-level
server no version); protocolVersion is what that mcp answers a 2025-06-18
client.

Only the typing forms these servers use are understood (str, int, float,
bool, Any, List/list[...], Dict/dict[...], Optional[...], Union[...], X | None,
Literal[...]); anything else is an error, not a guess."""
import argparse
import ast
import json
import sys

SIMPLE = {"str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
          "bool": {"type": "boolean"}, "Any": {}, "object": {}}


def vtuple(v):
    return tuple(int(x) for x in v.split("."))


def name_of(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    raise ValueError(f"unsupported annotation {ast.dump(node)}")


def type_schema(node):
    """pydantic 2's JSON schema of one annotation."""
    if node is None:
        return {}
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([node.left, node.right])
    if isinstance(node, (ast.Name, ast.Attribute)):
        n = name_of(node)
        if n in SIMPLE:
            return dict(SIMPLE[n])
        if n in ("List", "list"):
            return {"items": {}, "type": "array"}
        if n in ("Dict", "dict"):
            return {"additionalProperties": True, "type": "object"}
        raise ValueError(f"unsupported type {n}")
    if isinstance(node, ast.Subscript):
        base = name_of(node.value)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base in ("List", "list", "Sequence"):
            return {"items": type_schema(args[0]), "type": "array"}
        if base in ("Dict", "dict"):
            val = type_schema(args[1])
            return {"additionalProperties": val if val else True, "type": "object"}
        if base == "Optional":
            return union([args[0], ast.Constant(None)])
        if base == "Union":
            return union(args)
        if base == "Literal":
            vals = [a.value for a in args]
            out = {"enum": vals}
            kinds = {type(v) for v in vals}
            if kinds == {str}:
                out["type"] = "string"
            elif kinds == {int}:
                out["type"] = "integer"
            if len(vals) == 1:
                out = {"const": vals[0], **({"type": out["type"]} if "type" in out else {})}
            return out
        raise ValueError(f"unsupported generic {base}")
    raise ValueError(f"unsupported annotation {ast.dump(node)}")


def union(members):
    flat = []
    for m in members:
        s = type_schema(m)
        if "anyOf" in s and len(s) == 1:
            flat.extend(s["anyOf"])
        else:
            flat.append(s)
    return {"anyOf": flat}


def title(field):
    return field.title().replace("_", " ")


def literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"unsupported default {ast.dump(node)}")


def is_tool_decorator(d):
    call = d if isinstance(d, ast.Call) else None
    target = call.func if call else d
    return (isinstance(target, ast.Attribute) and target.attr == "tool"), call


def tool_of(fn, mcp_version):
    deco_name = deco_desc = None
    found = False
    for d in fn.decorator_list:
        ok, call = is_tool_decorator(d)
        if ok:
            found = True
            for kw in (call.keywords if call else []):
                if kw.arg == "name":
                    deco_name = literal(kw.value)
                elif kw.arg == "description":
                    deco_desc = literal(kw.value)
    if not found:
        return None
    a = fn.args
    params = a.posonlyargs + a.args
    defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)
    props, required = {}, []
    for p, dflt in list(zip(params, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        if p.annotation is not None and isinstance(p.annotation, (ast.Name, ast.Attribute)) \
                and name_of(p.annotation) == "Context":
            continue
        s = type_schema(p.annotation)
        prop = {**s, "title": title(p.arg)}
        if dflt is None:
            required.append(p.arg)
        else:
            prop["default"] = literal(dflt)
        props[p.arg] = prop
    schema = {"properties": props, "title": f"{fn.name}Arguments", "type": "object"}
    if required:
        schema["required"] = required
    doc = ast.get_docstring(fn, clean=False)
    tool = {"name": deco_name or fn.name,
            "description": deco_desc if deco_desc is not None else (doc or ""),
            "inputSchema": schema}
    if vtuple(mcp_version) >= (1, 10) and fn.returns is not None:
        rs = type_schema(fn.returns)
        tool["outputSchema"] = {"properties": {"result": {**rs, "title": "Result"}},
                                "required": ["result"], "title": f"{fn.name}Output",
                                "type": "object"}
    return tool


def module_constants(tree):
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def field_default(value, consts):
    """(required, default, description) of a model field's right-hand side."""
    if value is None:
        return True, None, None
    if isinstance(value, ast.Call) and name_of(value.func) == "Field":
        desc = None
        required, default = True, None
        if value.args:
            a0 = value.args[0]
            if not (isinstance(a0, ast.Constant) and a0.value is Ellipsis):
                required, default = False, const_value(a0, consts)
        for kw in value.keywords:
            if kw.arg == "default":
                required, default = False, const_value(kw.value, consts)
            elif kw.arg == "description":
                desc = literal(kw.value)
        return required, default, desc
    return False, const_value(value, consts), None


def const_value(node, consts):
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    return literal(node)


def model_schemas(tree, consts):
    """pydantic 2's model_json_schema() of every BaseModel subclass."""
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef)
                and any(name_of(b) == "BaseModel" for b in node.bases)):
            continue
        props, required = {}, []
        for st in node.body:
            if not isinstance(st, ast.AnnAssign):
                continue
            field = st.target.id
            req, default, desc = field_default(st.value, consts)
            prop = {**type_schema(st.annotation), "title": title(field)}
            if desc is not None:
                prop["description"] = desc
            if req:
                required.append(field)
            else:
                prop["default"] = default
            props[field] = prop
        schema = {"properties": props, "title": node.name, "type": "object"}
        if required:
            schema["required"] = required
        out[node.name] = schema
    return out


def enum_values(tree):
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(name_of(b) == "Enum" for b in node.bases):
            for st in node.body:
                if isinstance(st, ast.Assign):
                    out[f"{node.name}.{st.targets[0].id}"] = literal(st.value)
    return out


def lowlevel_tools(tree):
    """Tool(name=..., description=..., inputSchema=Model.model_json_schema())
    calls, in source order."""
    consts = module_constants(tree)
    models = model_schemas(tree, consts)
    enums = enum_values(tree)
    tools = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "Tool"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        n = kw["name"]
        name = enums[f"{n.value.id}.{n.attr}"] if isinstance(n, ast.Attribute) else literal(n)
        sch = kw["inputSchema"]
        if not (isinstance(sch, ast.Call) and isinstance(sch.func, ast.Attribute)
                and sch.func.attr in ("model_json_schema", "schema")):
            raise ValueError(f"{name}: inputSchema is not Model.model_json_schema()")
        tools.append((node.lineno, node.col_offset,
                      {"name": name, "description": literal(kw["description"]),
                       "inputSchema": models[sch.func.value.id]}))
    return [t for _, _, t in sorted(tools, key=lambda x: x[:2])]


def protocol_answer(mcp_version):
    return "2025-06-18" if vtuple(mcp_version) >= (1, 10) else "2025-03-26"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcp", required=True, help="version of the mcp package it ran on")
    ap.add_argument("--name", required=True, help="FastMCP(name)")
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--only", help="comma-separated tool names to keep (others are dropped)")
    ap.add_argument("--lowlevel", action="store_true",
                    help="a low-level Server: Tool(...) with pydantic models' schemas")
    a = ap.parse_args()
    tree = ast.parse(sys.stdin.read())
    tools = []
    if a.lowlevel:
        tools = lowlevel_tools(tree)
    for node in tree.body if not a.lowlevel else []:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            t = tool_of(node, a.mcp)
            if t:
                tools.append(t)
    if a.only:
        keep = a.only.split(",")
        tools = [t for t in tools if t["name"] in keep]
    json.dump({"upstream": a.upstream, "source": a.source,
               "serverInfo": {"name": a.name, "version": a.mcp},
               "protocolVersion": protocol_answer(a.mcp), "tools": tools},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
