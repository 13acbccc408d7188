#!/usr/bin/env bash
# ros2:// in → mask → ros2:// out latency over loopback, measured by the Fast-DDS peer (issue 31; a
# measurement, not a test): `dds_peer latency` publishes synthetic depth (and an all-kept mono8 mask)
# at 30 Hz as a camera driver and times each frame from its write to its receipt of /depthmask/depth;
# `depthmask live` runs between them with the cpu backend, DDS pinned to 127.0.0.1 (config=loopback).
# Each size is run twice: with the peer subscribed to /depthmask/depth, and with no subscriber, where
# depthmask's publisher encodes nothing (Ros2Publisher::publish checks the match first): the CPU time
# depthmask live used (utime + stime, /proc) shows that cost.
#
#   bash bench/ros2_latency.sh [--bin build-cpu] [--frames 150] [--qos default|sensor_data] [--backend cpu] [--4k]
#
# --4k adds one 3840x2160 32FC1 run (33 MB messages) of 30 frames. --backend picks live's backend
# (the GPU machine: copy). --depthmask and --peer name the two programs where they are not in --bin
# (a GPU bundle: wrappers around its run.sh).
set -euo pipefail
bin=build-cpu frames=150 qos=default big=0 backend=cpu dm="" peer=""
usage="usage: $0 [--bin DIR] [--depthmask PROG] [--peer PROG] [--frames N] [--qos default|sensor_data] [--backend B] [--4k]"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --depthmask) dm=$2; shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --qos) qos=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --4k) big=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
dm=${dm:-$bin/depthmask} peer=${peer:-$bin/tests/ros2/depthmask_dds_peer}
[ -x "$dm" ] && [ -x "$peer" ] || { echo "ros2_latency: no depthmask ($dm) or depthmask_dds_peer ($peer)" >&2; exit 2; }
work=$(mktemp -d)
live_pid=""
trap '[ -n "$live_pid" ] && kill "$live_pid" 2>/dev/null; rm -rf "$work"' EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

dom=$((180 + $$ % 20))
run_case() {  # WIDTH HEIGHT ENCODING FRAMES SUBSCRIBE
  local src="ros2:///camera/depth/image_rect_raw?mask=/seg/mask&qos=$qos&domain=$dom&config=loopback"
  "$dm" live --source "$src" --publish "ros2://depthmask?qos=$qos&domain=$dom&config=loopback" \
    --set backend.kind="$backend" --set live.overflow=block --duration 600 >"$work/live.log" 2>&1 &
  live_pid=$!
  sleep 1
  local t0 t1 hz
  t0=$(cpu_ticks "$live_pid")
  line=$("$peer" latency "$dom" "$qos" "$1" "$2" "$3" "$4" "$5") || { cat "$work/live.log"; exit 1; }
  t1=$(cpu_ticks "$live_pid")
  hz=$(getconf CLK_TCK)
  kill -INT "$live_pid"; wait "$live_pid" 2>/dev/null || true; live_pid=""
  processed=$(sed -n 's/.*captured, \([0-9]*\) processed.*/\1/p' "$work/live.log" | tail -1)
  printf '| %sx%s %s | %s | %s | %s | %s ms/frame |\n' "$1" "$2" "$3" "$5" "${line#*: }" "${processed:-?}" \
    "$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$4" 'BEGIN {printf "%.2f", 1000 * t / hz / n}')"
  dom=$((dom + 1))
}

echo "depthmask live --set backend.kind=$backend, QoS $qos, $(nproc) CPUs, $(date -u '+%F %H:%M UTC')"
echo "| frames | subscribers | peer: sent, received, latency write → /depthmask/depth | processed by live | depthmask live CPU |"
echo "|---|---|---|---|---|"
for size in "640 480" "1920 1080"; do
  for sub in 1 0; do run_case $size 16UC1 "$frames" "$sub"; done
done
if [ "$big" = 1 ]; then run_case 3840 2160 32FC1 30 1; fi
