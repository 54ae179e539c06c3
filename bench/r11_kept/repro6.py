"""r11 finding 6 (low): an import that stops (LongChain, or a RecursionError) skips Kept.close,
so the warnings of definitions restored from the kept file (reported by close for the kept
operations) are missing: the failing build prints fewer warnings than a fresh one."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, HERE)
import e2e
S = lambda n: {"$ref": f"#/components/schemas/{n}"}
schemas = {"Warn": {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}}
for i in range(160):  # a chain of 160 allOf bases (MAX_BASES is 150)
    schemas[f"C{i}"] = {"allOf": [S(f"C{i+1}")]} if i < 159 else {"type": "object"}
def doc(b_schema):
    ok = lambda s: {"200": {"description": "ok", "content": {"application/json": {"schema": s}}}}
    return {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
            "paths": {"/a": {"get": {"operationId": "a", "responses": ok(S("Warn"))}},
                      "/b": {"get": {"operationId": "b", "responses": ok(b_schema)}}},
            "components": {"schemas": schemas}}
print(e2e.run_steps([doc({"type": "string"}), doc(S("C0"))], label="repro6"))
