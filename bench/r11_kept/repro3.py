"""r11 finding 3: the converted definitions restored from the kept file include derived
``...Answer`` copies made by an earlier build for another operation; a rebuilt operation
reuses them (leave_out: 'another answer's already'): here the answer schema keeps a writeOnly
property (Cred.token) that a fresh build leaves out. Both operations are rebuilt in step 1."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, HERE)
from e2e import run_steps
S = lambda n: {"$ref": f"#/components/schemas/{n}"}
ok = lambda s: {"200": {"description": "ok", "content": {"application/json": {"schema": s}}}}
none = {"204": {"description": "none"}}
comps = {"schemas": {
  "Cred": {"type": "object", "properties": {"token": {"type": "string", "writeOnly": True}}},
  "List": {"type": "array", "items": {"type": "object", "properties": {"node": {**S("Tree"), "writeOnly": True}}}},
  "Tree": {"allOf": [S("List"), {"properties": {"node": {"type": "array", "items": S("Cred")}}}]},
  "Page": {"type": "object", "properties": {"trees": {"type": "object", "additionalProperties": S("Tree")}}}}}
def doc(b, c):
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
            "paths": {"/b": {"get": {"operationId": "b", "responses": b}}, "/c": {"get": {"operationId": "c", "responses": c}}},
            "components": comps}
print(run_steps([doc(none, ok(S("List"))), doc(ok(S("Page")), none)], label="repro3"))
