"""r11 finding 5 (simulated): the kept file's digest covers mcpgen's sources and Python's
version, not the versions of pydantic/jsonschema whose verdicts the import's warnings and
converted defaults depend on (check/formats.py keys its own verdicts by pydantic's version).
A pydantic whose verdict on a default differs is simulated by patching formats._adapter and
metadata.version; the rebuild through the cache keeps the old warning, a fresh one does not."""
import os as _os; HERE = _os.path.dirname(_os.path.abspath(__file__)); ROOT = _os.path.dirname(_os.path.dirname(HERE))
import sys; sys.path.insert(0, ROOT)
import json, os, tempfile, pathlib
from importlib import metadata
from mcpgen.load import load_text
from mcpgen.openapi import import_openapi
from mcpgen.openapi import keywords
from mcpgen.check import formats
doc = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
 "paths": {"/a": {"get": {"operationId": "a", "parameters": [{"name": "since", "in": "query",
   "schema": {"$ref": "#/components/schemas/Day"}}], "responses": {"204": {"description": "none"}}}}},
 "components": {"schemas": {"Day": {"type": "string", "format": "date", "default": "2024-1-5"}}}}
folder = pathlib.Path(tempfile.mkdtemp()); warm = tempfile.mkdtemp()
def run(cache):
    os.environ["MCPGEN_CACHE_DIR"] = cache
    r = import_openapi(load_text(json.dumps(doc), "api.json", folder, json_first=True), {}, keep=True)
    formats.save()
    return [p.message for p in r.problems], r.defs
print("old pydantic, warm:", run(warm))
# "upgrade": a pydantic that accepts the value; the verdict cache is keyed by version, so it misses
class Lenient:
    def validate_python(self, value): return value
formats._adapter = lambda name: Lenient()
real = metadata.version
metadata.version = lambda name: "99.0" if name == "pydantic" else real(name)
formats._verdicts.cache_clear(); keywords._fits.cache_clear()
print("new pydantic, warm: ", run(warm))
print("new pydantic, fresh:", run(tempfile.mkdtemp()))
