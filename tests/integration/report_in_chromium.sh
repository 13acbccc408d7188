#!/usr/bin/env bash
# The QA report in a real browser (issue 17): a run on the committed sample with --report, then
# Debian's headless Chromium loads the page from file:// with no network. --dump-dom must show the
# data-selfcheck="ok" that the page's inline script sets once every image has decoded and no error
# was raised; --screenshot must save a non-empty PNG (kept in the build folder for CI to look at).
# Skips (exit 77, ctest's SKIP_RETURN_CODE) with the reason when chromium is not installed
# (scripts/install-deps.sh installs it where the distribution packages it).
#   tests/integration/report_in_chromium.sh DEPTHMASK_BINARY BUILD_DIR
set -euo pipefail
bin=${1:?usage: report_in_chromium.sh DEPTHMASK_BINARY BUILD_DIR}
build=${2:?usage: report_in_chromium.sh DEPTHMASK_BINARY BUILD_DIR}
here=$(cd "$(dirname "$0")/../.." && pwd)

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: no chromium on PATH (scripts/install-deps.sh installs Debian's chromium)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/data/sample" "$work/data"
# One frame that fails, so the page has a failures table (with markup in its message, escaped).
printf 'not a png <script>' >"$work/data/depth/000003.png"
out="$work/out"
set +e
"$bin" run --config "$work/data/depthmask.yaml" --output "$out" --backend cpu --set output.format=[tiff,json] --report
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "FAIL: the run with one bad frame exited $rc, expected 1 (an input failure)"; exit 1; }
page="$out/depthmask-report.html"
[ -s "$page" ] || { echo "FAIL: run --report wrote no $page"; exit 1; }

# As root Chromium needs --no-sandbox; containers have a small /dev/shm. A profile of its own, so
# parallel tests do not share one. Virtual time lets the decode() promises settle before the dump; on a
# loaded machine they may not have (the page still says "pending"): ask again with more time.
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile")
check=""
# A browser that fails to start (seen once in a full parallel ctest on 2 loaded cores, not reproduced)
# is tried twice more, each failure's log printed, before the test fails.
dump() {
  local attempt
  for attempt in 1 2 3; do
    if dom=$(timeout 180 "$browser" "${flags[@]}" --virtual-time-budget="$1" --dump-dom "file://$page" 2>"$work/chromium.log"); then
      return 0
    fi
    echo "chromium --dump-dom failed (attempt $attempt of 3):"; tail -20 "$work/chromium.log"
    rm -rf "$work/profile"
  done
  return 1
}
for budget in 5000 15000 30000 60000; do
  dump "$budget" || { echo "FAIL: chromium --dump-dom failed"; exit 1; }
  check=$(grep -o -m1 'data-selfcheck="[^"]*"' <<<"$dom")
  echo "self-check (--virtual-time-budget=$budget): $check"
  [ "$check" = 'data-selfcheck="pending"' ] || break
done
[ "$check" = 'data-selfcheck="ok"' ] || { echo "FAIL: expected data-selfcheck=\"ok\""; exit 1; }
# Here-strings, not `printf | grep -q`: grep -q exits at its first match, and under pipefail the
# printf still writing the rest of a large DOM would fail the pipeline with SIGPIPE (a flaky FAIL).
grep -q '<img' <<<"$dom" || { echo "FAIL: the page shows no thumbnail"; exit 1; }
grep -q 'not a png\|000003' <<<"$dom" || { echo "FAIL: the failure is not listed"; exit 1; }

shot="$build/report-screenshot.png"
rm -f "$shot"
timeout 180 "$browser" "${flags[@]}" --virtual-time-budget=5000 --screenshot="$shot" --window-size=1280,2000 "file://$page" \
  2>>"$work/chromium.log" >/dev/null || { echo "FAIL: chromium --screenshot failed"; tail -20 "$work/chromium.log"; exit 1; }
[ -s "$shot" ] || { echo "FAIL: no screenshot at $shot"; exit 1; }
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || { echo "FAIL: $shot is not a PNG"; exit 1; }
echo "ok: $page passes its self-check in $("$browser" --version 2>/dev/null | head -1); screenshot $shot ($(stat -c %s "$shot") bytes)"
