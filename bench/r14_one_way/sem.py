import sys, json
sys.argv = [sys.argv[0], "0", "0", sys.argv[1]]
exec(open("bench/r14_one_way/fuzz.py").read().split("stats = {")[0])
def paths(schema, defs, depth=3):
    out = set()
    def walk(node, prefix, d, stack):
        if not isinstance(node, dict) or d > depth: return
        key = (id(node), prefix)
        if key in stack: return
        stack = stack | {key}
        if isinstance(node.get("$ref"), str):
            walk(defs.get(node["$ref"].rsplit("/", 1)[-1]), prefix, d, stack)
        for k in ("allOf", "anyOf", "oneOf"):
            for m in node.get(k) or (): walk(m, prefix, d, stack)
        for k, v in (node.get("properties") or {}).items():
            out.add(prefix + (k,)); walk(v, prefix + (k,), d + 1, stack)
        if isinstance(node.get("items"), dict): walk(node["items"], prefix + ("[]",), d, stack)
        if isinstance(node.get("additionalProperties"), dict): walk(node["additionalProperties"], prefix + ("*",), d + 1, stack)
    walk(schema, (), 0, frozenset())
    return out
n = 0
for line in open(sys.argv[3]):
    if not line.startswith("ORDER"): continue
    seed = int(line.split()[1]); d = one(seed)
    m, _ = load(d); m2, _ = load({**d, "paths": dict(reversed(list(d["paths"].items())))})
    A = {t.name: t for t in m.tools}; B = {t.name: t for t in m2.tools}
    for k in A:
        for part in ("input_schema", "output_schema"):
            sa, sb = getattr(A[k], part) or {}, getattr(B[k], part) or {}
            pa = paths(sa, {**m.shared_defs, **sa.get("$defs", {})}); pb = paths(sb, {**m2.shared_defs, **sb.get("$defs", {})})
            if pa != pb:
                n += 1; print(seed, k, part, "fwd-only", sorted(pa - pb)[:3], "rev-only", sorted(pb - pa)[:3])
print("semantic diffs", n)
