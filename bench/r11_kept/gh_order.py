"""Fresh imports of GitHub's description, paths in their order and reversed: tools that differ."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT)
import json, os, tempfile, pathlib
os.environ["MCPGEN_CACHE_DIR"] = ""
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
data = json.load(open("/work/main/bench/out/github/api.github.com.json"))
res = []
for paths in (data["paths"], dict(reversed(list(data["paths"].items())))):
    d = {**data, "paths": paths}
    r = import_openapi(load_text(json.dumps(d), "api.json", pathlib.Path(tempfile.mkdtemp()), json_first=True), {})
    res.append(({t["name"]: t for t in r.tools}, {o.tool: o for o in r.operations}, r.defs))
(t1, o1, d1), (t2, o2, d2) = res
diff = [n for n in t1 if json.dumps(t1[n], sort_keys=True) != json.dumps(t2[n], sort_keys=True)]
odiff = [n for n in o1 if o1[n] != o2[n]]
print(len(t1), "tools;", len(diff), "differ:", diff[:10], "; ops differ:", len(odiff), odiff[:5])
print("defs only in one:", sorted(set(d1) ^ set(d2))[:10])
