import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT); sys.path.insert(0, HERE)
import copy, json, random, os
from h import run

def gen_schema(rng, n, depth=0, own=None):
    kind = rng.choice(["obj", "obj", "allof", "oneof", "arr"])
    lim = n if own is None else own
    if lim == 0 and kind in ("allof", "oneof"): kind = "obj"
    def prop():
        c = rng.choice(["str", "int", "warn", "ref", "ro", "wo", "arr", "ro_ref", "addl", "pat", "wo_ref", "nullable"])
        if c == "addl": return {"type": "object", "additionalProperties": {"$ref": f"#/components/schemas/S{rng.randrange(n)}"}}
        if c == "pat": return {"type": "object", "patternProperties": {"^x": {"type": "string", "readOnly": rng.random() < 0.5}}}
        if c == "wo_ref": return {"$ref": f"#/components/schemas/S{rng.randrange(n)}", "writeOnly": True}
        if c == "nullable": return {"type": ["string", "null"], "readOnly": True}
        if c == "str": return {"type": "string"}
        if c == "int": return {"type": "integer"}
        if c == "warn": return {"type": "string", "default": 5}
        if c == "ref": return {"$ref": f"#/components/schemas/S{rng.randrange(n)}"}
        if c == "ro": return {"type": "string", "readOnly": True}
        if c == "wo": return {"type": "string", "writeOnly": True}
        if c == "ro_ref": return {"allOf": [{"$ref": f"#/components/schemas/S{rng.randrange(n)}"}], "readOnly": True}
        return {"type": "array", "items": {"$ref": f"#/components/schemas/S{rng.randrange(n)}"}}
    def obj():
        props = {f"p{i}": prop() for i in range(rng.randint(1, 3))}
        o = {"type": "object", "properties": props}
        if rng.random() < 0.4: o["required"] = [rng.choice(list(props))]
        return o
    if kind == "obj": return obj()
    if kind == "allof": return {"allOf": [{"$ref": f"#/components/schemas/S{rng.randrange(lim)}"}, obj()]}
    if kind == "oneof": return {"oneOf": [{"$ref": f"#/components/schemas/S{rng.randrange(lim)}"}, obj()]}
    return {"type": "array", "items": obj()}

def ok(schema, media="application/json"):
    return {"description": "ok", "content": {media: {"schema": schema}}}

def schema_choice(rng, n):
    c = rng.choice(["ref", "ref", "inline", "str"])
    if c == "ref": return {"$ref": f"#/components/schemas/S{rng.randrange(n)}"}
    if c == "inline": return gen_schema(rng, n)
    return {"type": "string"}

def gen_op(rng, n, method):
    op = {"operationId": None}
    r = rng.random()
    if r < 0.35: op["responses"] = {"200": {"$ref": f"#/components/responses/R{rng.randrange(2)}"}}
    elif r < 0.9: op["responses"] = {"200": ok(schema_choice(rng, n))}
    else: op["responses"] = {"204": {"description": "none"}}
    if rng.random() < 0.5:
        op["responses"]["404"] = {"$ref": f"#/components/responses/R{rng.randrange(2)}"}
    if rng.random() < 0.3:
        op["responses"]["default"] = ok(schema_choice(rng, n))
    if rng.random() < 0.3:
        op["responses"]["201"] = ok(schema_choice(rng, n))
    if rng.random() < 0.15:
        op["responses"]["202"] = {"description": "later", "headers": {"Location": {"schema": {"type": "string"}}}}
    if method in ("post", "put") and rng.random() < 0.8:
        if rng.random() < 0.5:
            op["requestBody"] = {"$ref": f"#/components/requestBodies/B{rng.randrange(2)}"}
        else:
            op["requestBody"] = {"required": rng.random() < 0.5, "content": {"application/json": {"schema": schema_choice(rng, n)}}}
    if rng.random() < 0.5:
        op["parameters"] = [{"$ref": f"#/components/parameters/P{rng.randrange(2)}"}]
    if rng.random() < 0.2:
        op["description"] = f"d{rng.randrange(1000)}"
    return op

def gen_doc(rng, version="3.1.0"):
    n = 4
    comps = {
        "schemas": {f"S{i}": gen_schema(rng, n, own=i) for i in range(n)},
        "responses": {f"R{i}": ok(schema_choice(rng, n)) for i in range(2)},
        "requestBodies": {f"B{i}": {"content": {rng.choice(["application/json", "application/json", "multipart/form-data", "text/plain"]): {"schema": schema_choice(rng, n)}}} for i in range(2)},
        "parameters": {
            "P0": {"name": "q", "in": "query", "schema": schema_choice(rng, n)},
            "P1": {"name": "h", "in": "header", "schema": {"type": "string", "default": 3}},
        },
    }
    paths = {}
    for i, url in enumerate(["/a", "/b", "/c"]):
        paths[url] = {}
        if rng.random() < 0.3:
            paths[url]["parameters"] = [{"$ref": f"#/components/parameters/P{rng.randrange(2)}"}]
        for m in rng.sample(["get", "post", "put"], 2):
            paths[url][m] = gen_op(rng, n, m)
            paths[url][m]["operationId"] = f"op_{url[1:]}_{m}"
    return {"openapi": version, "info": {"title": "T", "version": "1"},
            "servers": [{"url": "https://x.example"}], "paths": paths, "components": comps}

def edit(rng, doc):
    doc = copy.deepcopy(doc)
    url = rng.choice(list(doc["paths"]))
    m = rng.choice([k for k in doc["paths"][url] if k != "parameters"])
    new = gen_op(rng, 4, m)
    new["operationId"] = doc["paths"][url][m]["operationId"]
    field = rng.choice(["responses", "requestBody", "parameters", "description", "all"])
    if field == "all":
        doc["paths"][url][m] = new
    elif field in new:
        doc["paths"][url][m][field] = new[field]
    else:
        doc["paths"][url][m].pop(field, None)
    return doc

if __name__ == "__main__":
    start, count = int(sys.argv[1]), int(sys.argv[2])
    for seed in range(start, start + count):
        rng = random.Random(seed)
        doc = gen_doc(rng)
        steps = [doc]
        for _ in range(int(os.environ.get("R11EDITS", "5"))):
            steps.append(edit(rng, steps[-1]))
        try:
            bad = run([(d, {}) for d in steps], verbose=False, name=os.environ.get("R11NAME", "api.json"))
        except Exception as e:
            print("seed", seed, "EXC", type(e).__name__, e); continue
        if bad:
            print("seed", seed, "BAD steps", bad, flush=True)
            json.dump(steps, open(f"/tmp/r11-e-seed{seed}.json", "w"))
    print("done")
