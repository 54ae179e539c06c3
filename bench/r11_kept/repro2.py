"""r11 finding 2: a derived ``...Request`` definition is made once, by the first operation
needing it, in that operation's context: a rebuild through the cache keeps the one an
earlier build made; a fresh build makes it for another operation -> different package."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, HERE)
from e2e import run_steps
S = lambda n: {"$ref": f"#/components/schemas/{n}"}
def doc(a_body):
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
     "paths": {"/a": {"post": {"operationId": "a", **({"requestBody": {"content": {"application/json": {"schema": S(a_body)}}}} if a_body else {}), "responses": {"204": {"description": "none"}}}},
               "/c": {"get": {"operationId": "c", "parameters": [{"name": "q", "in": "query", "schema": S("Item")}], "responses": {"204": {"description": "none"}}}}},
     "components": {"schemas": {
       "Base": {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}},
       "Item": {"allOf": [S("Base"), {"type": "object", "properties": {"id": {"allOf": [S("List")]}}}]},
       "List": {"type": "array", "items": {"type": "object", "properties": {"child": {"allOf": [S("Item")], "readOnly": True}}}}}}}
print(run_steps([doc(None), doc("List")], label="repro2"))
