"""Fresh import, same document, paths in two orders: operation c's input differs (run against any tree)."""
import json, copy, tempfile, pathlib, os, sys
os.environ["MCPGEN_CACHE_DIR"] = ""
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
import mcpgen; print(mcpgen.__file__)
S = lambda n: {"$ref": f"#/components/schemas/{n}"}
d = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
 "paths": {"/a": {"post": {"operationId": "a", "requestBody": {"content": {"application/json": {"schema": S("List")}}}, "responses": {"204": {"description": "none"}}}},
           "/c": {"get": {"operationId": "c", "parameters": [{"name": "q", "in": "query", "schema": S("Item")}], "responses": {"204": {"description": "none"}}}}},
 "components": {"schemas": {
   "Base": {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}},
   "Item": {"allOf": [S("Base"), {"type": "object", "properties": {"id": {"allOf": [S("List")]}}}]},
   "List": {"type": "array", "items": {"type": "object", "properties": {"child": {"allOf": [S("Item")], "readOnly": True}}}}}}}
d2 = copy.deepcopy(d); d2["paths"] = {"/c": d["paths"]["/c"], "/a": d["paths"]["/a"]}
for x in (d, d2):
    doc = load_text(json.dumps(x), "api.json", pathlib.Path(tempfile.mkdtemp()), json_first=True)
    r = import_openapi(doc, {})
    print([t for t in r.tools if t["name"] == "c"][0]["input"]["$defs"])
