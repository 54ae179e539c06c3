#!/bin/bash
# r11 finding 1: discriminator cycle (Pet oneOf Cat/Dog, Cat allOf Pet) + writeOnly: a touched rebuild differs
set -u
cd "$(dirname "$0")/../.." && . /work/venv/bin/activate
D=$(mktemp -d); W=$D/warm-cache
python - "$D" <<'PY'
import json, sys, copy
d = sys.argv[1]
ok = lambda s: {"description": "ok", "content": {"application/json": {"schema": s}}}
S = lambda n: {"$ref": f"#/components/schemas/{n}"}
doc = {"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://x.example"}],
 "paths": {"/a": {"get": {"operationId": "a", "responses": {"200": ok(S("Pet"))}}},
           "/b": {"get": {"operationId": "b", "responses": {"200": ok(S("Cat"))}}}},
 "components": {"schemas": {
   "Pet": {"type": "object", "properties": {"kind": {"type": "string"}}, "oneOf": [S("Cat"), S("Dog")],
           "discriminator": {"propertyName": "kind"}},
   "Cat": {"allOf": [S("Pet"), {"type": "object", "properties": {"secret": {"type": "string", "writeOnly": True}}}]},
   "Dog": {"allOf": [S("Pet"), {"type": "object", "properties": {"bark": {"type": "string"}}}]}}}}
json.dump(doc, open(f"{d}/v0.json", "w"), indent=1)
doc["paths"]["/b"]["get"]["description"] = "touched"
json.dump(doc, open(f"{d}/v1.json", "w"), indent=1)
PY
for v in v0 v1; do
  cp $D/$v.json $D/api.json
  MCPGEN_CACHE_DIR=$W timeout 300 python -m mcpgen build $D/api.json -o $D/warm-$v 2>$D/warm-$v.err >/dev/null
  MCPGEN_CACHE_DIR=$D/fresh-cache-$v timeout 300 python -m mcpgen build $D/api.json -o $D/fresh-$v 2>$D/fresh-$v.err >/dev/null
  echo "== $v: package diff (warm vs fresh):"; diff -r $D/warm-$v $D/fresh-$v | head -20
  diff <(sed "s#$D/warm-$v##g" $D/warm-$v.err) <(sed "s#$D/fresh-$v##g" $D/fresh-$v.err) >/dev/null && echo "   stderr same" || echo "   stderr DIFFERS"
done
