"""r11 finding 4: a reference to another file spelled so that the text pre-check misses it
(JSON '\\u0024ref'): the import is kept though it spans two files; an edit of the other file
is not seen by a rebuild through the cache (stale package)."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys, json; sys.path.insert(0, HERE)
import e2e, tempfile, shutil, subprocess
from pathlib import Path
main = r'''{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
 "paths": {"/pets": {"get": {"operationId": "pets", "responses": {"200": {"description": "ok",
   "content": {"application/json": {"schema": {"\u0024ref": "other.json#/Pet"}}}}}}}}}'''
d = Path(tempfile.mkdtemp(prefix="r11-ext-"))
(d / "api.json").write_text(main)
for i, props in enumerate([{"name": {"type": "string"}}, {"name": {"type": "string"}, "age": {"type": "integer"}}]):
    (d / "other.json").write_text(json.dumps({"Pet": {"type": "object", "properties": props}}))
    rw, ew = e2e.build(d / "api.json", d / f"w{i}", str(d / "warm"))
    rf, ef = e2e.build(d / "api.json", d / f"f{i}", str(d / f"fresh{i}"))
    diff = subprocess.run(["diff", "-r", str(d / f"w{i}"), str(d / f"f{i}")], capture_output=True, text=True).stdout
    print(f"step {i}: rc {rw}/{rf} stderr_same={ew == ef} age in warm: {'age' in (d / f'w{i}' / 'mcp-surface.json').read_text()}, in fresh: {'age' in (d / f'f{i}' / 'mcp-surface.json').read_text()}")
    print(diff[:600])
