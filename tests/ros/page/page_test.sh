#!/usr/bin/env bash
# ctest's live_page_decoder, live_page_chromium and live_page_firefox: the page `depthmask live --serve`
# serves (lib/live_serve/src/page.html). `decoder`: its PNG/CDR decoder in Node against fast-png and
# Foxglove's CDR serializer (decoder.test.mjs). `chromium`, `firefox`: the whole page in Debian's
# headless Chromium or Firefox ESR (puppeteer-core) against the real server (in_browser.mjs); the
# screenshot goes to BUILD_DIR. Skipped (exit 77), saying why, without Node 18+, tests/ros/node_modules,
# the browser or a build with the server.
#   page_test.sh decoder
#   page_test.sh chromium|firefox DEPTHMASK_BIN BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
what=${1:?usage: page_test.sh decoder | chromium|firefox DEPTHMASK_BIN BUILD_DIR}
name="live_page_$what"
command -v node >/dev/null ||
  { echo "$name: SKIPPED: no node (scripts/install-deps.sh installs Debian's nodejs + npm)"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "$name: SKIPPED: node $(node --version) is older than 18"; exit 77; }
[ -d "$here/../node_modules/fast-png" ] && [ -d "$here/../node_modules/puppeteer-core" ] ||
  { echo "$name: SKIPPED: no tests/ros/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
[ "$what" = decoder ] && exec node "$here/decoder.test.mjs"

bin=${2:?usage: page_test.sh chromium|firefox DEPTHMASK_BIN BUILD_DIR}
build=${3:?usage: page_test.sh chromium|firefox DEPTHMASK_BIN BUILD_DIR}
case "$what" in
  chromium) browser=$(command -v chromium || command -v chromium-browser || true) kind=chrome ;;
  firefox) browser=$(command -v firefox-esr || command -v firefox || true) kind=firefox ;;
  *) echo "page_test: unknown test '$what'" >&2; exit 2 ;;
esac
[ -n "$browser" ] ||
  { echo "$name: SKIPPED: no $what on PATH (scripts/install-deps.sh installs Debian's $what where packaged)"; exit 77; }
if grep -q '^live --serve: unavailable' <<<"$("$bin" info)"; then
  echo "$name: SKIPPED: $("$bin" info | grep '^live --serve')"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
BROWSER=$kind BROWSER_PATH=$browser node "$here/in_browser.mjs" "$bin" "$work/run" "$build/live-page-$what.png"
