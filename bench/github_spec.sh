#!/usr/bin/env bash
# Fetch GitHub's real REST API description (MIT, npm package @octokit/openapi) into
# bench/out/github/api.github.com.json for the build and start benchmarks.
set -euo pipefail
OUT="$(cd "$(dirname "$0")" && pwd)/out/github"
VERSION="${OCTOKIT_OPENAPI_VERSION:-23.0.2}"
mkdir -p "$OUT"
if [ ! -f "$OUT/api.github.com.json" ]; then
  (cd "$OUT" && npm pack "@octokit/openapi@$VERSION" --silent >/dev/null \
    && tar -xzf "octokit-openapi-$VERSION.tgz" package/generated/api.github.com.json package/LICENSE \
    && mv package/generated/api.github.com.json package/LICENSE . && rm -rf package ./*.tgz)
fi
echo "$OUT/api.github.com.json"
