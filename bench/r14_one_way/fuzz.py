"""r14: one_way fuzz (extends r12's fuzz_o1b generator): marked spec vs same spec without marks,
deep direction-mark leak check, required-without-property, path-order dependence."""
import json, random, sys, os, re
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.getcwd() + "/tests")
from dataclasses import asdict
from pathlib import Path
from test_openapi_paths_order import spec, get, ref
from mcpgen.pipeline import load_source_text
import logging; logging.disable(logging.CRITICAL)
seed0, n = int(sys.argv[1]), int(sys.argv[2])
NAMES = ["A", "B", "C", "D", "E"]
def prop(R, depth):
    r = R.random()
    if r < .3: s = ref(R.choice(NAMES))
    elif r < .42: s = {"type": "array", "items": ref(R.choice(NAMES))}
    elif r < .5: s = {"allOf": [ref(R.choice(NAMES))]}
    elif r < .56: s = {R.choice(["oneOf", "anyOf"]): [ref(R.choice(NAMES)), {"type": "string"}]}
    elif r < .62: s = {"type": "object", "additionalProperties": ref(R.choice(NAMES))}
    elif r < .72 and depth < 2: s = {"type": "object", "properties": {f"i{j}": prop(R, depth + 1) for j in range(2)}, "required": ["i0"]}
    elif r < .76 and depth < 2: s = {"allOf": [{"type": "object", "properties": {"k": prop(R, depth + 1)}, "required": ["k"]}, ref(R.choice(NAMES))]}
    else: s = {"type": R.choice(["string", "integer"])}
    m = R.random()
    if m < .2: s = {**s, "readOnly": True}
    elif m < .4: s = {**s, "writeOnly": True}
    return s
def obj(R, depth=0):
    s = {"type": "object", "properties": {f"p{i}": prop(R, depth) for i in range(R.randint(1, 3))}}
    s["required"] = [k for k in s["properties"] if R.random() < .5]
    r = R.random()
    if r < .2: return {"allOf": [ref(R.choice(NAMES)), s]}
    if r < .3: return {"oneOf": [ref(R.choice(NAMES)), s]}
    if r < .35: return {"anyOf": [s, ref(R.choice(NAMES))]}
    if r < .4: return {"allOf": [s, {"allOf": [ref(R.choice(NAMES))]}]}
    return s
def one(seed):
    R = random.Random(seed)
    schemas = {k: obj(R) for k in NAMES}
    paths = {}
    for i in range(R.randint(2, 4)):
        kind = R.random(); target = ref(R.choice(NAMES))
        if R.random() < .2: target = {"type": "array", "items": target}
        if kind < .4: paths[f"/g{i}"] = get(f"g{i}", target)
        elif kind < .7:
            p = {**get(f"p{i}", ref(R.choice(NAMES)) if R.random() < .5 else None)["get"], "requestBody": {"content": {"application/json": {"schema": target}}}}
            paths[f"/p{i}"] = {"post": p}
        else: paths[f"/q{i}"] = get(f"q{i}", ref(R.choice(NAMES)), query=target)
    return spec(paths, schemas)
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in ("readOnly", "writeOnly")}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
def load(d):
    l = load_source_text(json.dumps(d), "api.json", Path("."))
    if l.manifest is not None: return l.manifest, None
    return None, [p.message for p in l.problems.items if p.level.name == "ERROR"]
def leaks(schema, defs, kw):
    out, todo, seen = [], [(schema, "")], set()
    while todo:
        node, where = todo.pop()
        if isinstance(node, list): todo += [(v, where) for v in node]
        elif isinstance(node, dict):
            if node.get(kw) is True: out.append(where)
            nm = (node.get("$ref") or "").rsplit("/", 1)[-1]
            if nm in defs and nm not in seen: seen.add(nm); todo.append((defs[nm], nm))
            if isinstance(node.get("properties"), dict) and isinstance(node.get("required"), list):
                miss = [q for q in node["required"] if q not in node["properties"]]
                if miss and "allOf" not in node: out.append(("REQ", where, tuple(miss)))
            todo += [(v, where) for k, v in node.items() if k not in ("$ref", "$defs", "enum", "const")]
    return out
stats = {"ok": 0, "both_fail": 0, "markfail": 0, "leak": 0, "order": 0, "req": 0}
kinds = {}
for seed in range(seed0, seed0 + n):
    data = one(seed)
    m, err = load(data)
    if m is None:
        m0, err0 = load(strip(data))
        if m0 is None: stats["both_fail"] += 1; continue
        stats["markfail"] += 1
        k = re.sub(r"'[^']*'", "'X'", err[0])[:90]
        if k not in kinds: kinds[k] = seed; print("MARKFAIL", seed, err[0][:200], flush=True)
        continue
    stats["ok"] += 1
    other = {**data, "paths": dict(reversed(list(data["paths"].items())))}
    m2, e2 = load(other)
    if m2 is None or {t.name: json.dumps(asdict(t), sort_keys=True, default=str) for t in m.tools} != {t.name: json.dumps(asdict(t), sort_keys=True, default=str) for t in m2.tools} or m.shared_defs != m2.shared_defs:
        stats["order"] += 1; print("ORDER", seed, flush=True) if stats["order"] <= 5 else None
    for t in m.tools:
        for sch, kw in ((t.input_schema, "readOnly"), (t.output_schema, "writeOnly")):
            L = leaks(sch, m.shared_defs, kw)
            reqs = [x for x in L if isinstance(x, tuple)]; marks = [x for x in L if not isinstance(x, tuple)]
            if marks:
                stats["leak"] += 1
                if stats["leak"] <= 5: print("LEAK", seed, t.name, kw, marks[:3], flush=True)
            if reqs:
                stats["req"] += 1
                if stats["req"] <= 5: print("REQ", seed, t.name, kw, reqs[:3], flush=True)
print(stats, flush=True)
