#!/usr/bin/env bash
# ctest's live_serve_js: `depthmask live --serve` against Foxglove's WebSocket client (serve_client.mjs,
# png and raw depth) and the bad-client cases (serve_robust.mjs: the token, 404, a non-loopback bind's
# warning, garbage, hundreds of connections, a stalled client; descriptors and memory stay flat).
# Skipped (exit 77), saying why, without Node 18+, tests/ros/node_modules or a build with the server.
# usage: serve_test.sh DEPTHMASK_BIN
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
command -v node >/dev/null ||
  { echo "live_serve_js: SKIPPED: no node (scripts/install-deps.sh installs Debian's nodejs + npm)"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "live_serve_js: SKIPPED: node $(node --version) is older than 18"; exit 77; }
[ -d "$here/node_modules/@foxglove/ws-protocol" ] ||
  { echo "live_serve_js: SKIPPED: no tests/ros/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
grep -q '^live --serve: unavailable' <<<"$("$bin" info)" &&
  { echo "live_serve_js: SKIPPED: $("$bin" info | grep '^live --serve')"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$here/serve_client.mjs" "$bin" "$work/png" png
node "$here/serve_client.mjs" "$bin" "$work/raw" raw
node "$here/serve_robust.mjs" "$bin" "$work/robust"
