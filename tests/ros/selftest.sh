#!/usr/bin/env bash
# ctest's ros_js_selftest: the ROS bag tests' independent writer and reader (selftest.mjs) checked on
# their own. Skipped (exit 77), saying why, without Node 18+ or without tests/ros/node_modules
# (scripts/install-deps.sh installs both).
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null ||
  { echo "ros_js_selftest: SKIPPED: no node (scripts/install-deps.sh installs Debian's nodejs + npm)"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || { echo "ros_js_selftest: SKIPPED: node $(node --version) is older than 18"; exit 77; }
[ -d "$here/node_modules/@mcap/core" ] ||
  { echo "ros_js_selftest: SKIPPED: no tests/ros/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
exec node "$here/selftest.mjs" "$@"
