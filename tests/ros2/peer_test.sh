#!/usr/bin/env bash
# ros2:// against an independent DDS (issue 31): the Fast-DDS peer (dds_peer.cpp) publishes the real APC
# captures as a camera driver would and subscribes to what `depthmask live` publishes; every frame that
# comes back (/depthmask/depth, /mask, /reason, /points) must equal, bit for bit, what `depthmask run`
# writes for the same frames as a folder (.npy, .reason.png, .ply).
# Both depth encodings (16UC1 mm, 32FC1 m) and both QoS profiles (sensor_data, default), each on a
# DDS domain of its own (parallel tests do not meet), on loopback only (config=loopback; the peer
# whitelists 127.0.0.1). Exit 77 with the reason when the peer or the captures are absent.
# Usage: peer_test.sh DEPTHMASK PEER|- DATA WHY_NO_PEER
# The expected files come from `run --backend cpu`; `live` masks with PEER_LIVE_BACKEND (default auto:
# the GPU's backend where there is one, so on the GPU machine this compares the GPU with the CPU).
# The GPU machine's 4K case: DDS_PEER_SIZE=3840x2160 (the captures scaled, nearest neighbour),
# DDS_PEER_PACE_MS (between frames), PEER_CASES (default: all four "ENCODING:QOS").
backend=${PEER_LIVE_BACKEND:-auto}
cases=${PEER_CASES:-"16UC1:sensor_data 16UC1:default 32FC1:sensor_data 32FC1:default"}
set -euo pipefail
dm=$1 peer=$2 data=$3 why=${4:-}
if [ "$peer" = "-" ]; then echo "SKIP: $why"; exit 77; fi
if [ ! -d "$data/apc-vision-toolbox/scene-0000" ]; then
  echo "SKIP: the APC captures are absent ($data/apc-vision-toolbox/scene-0000; ../shared/data/README.md)"
  exit 77
fi
work=$(mktemp -d)
live_pid=""
cleanup() {
  if [ -n "$live_pid" ]; then kill "$live_pid" 2>/dev/null || true; wait "$live_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$peer" prepare "$data" "$work/in"
# The masked depth, the reason codes and the PLY (with the K the peer's camera_info carries): what
# /depthmask/depth, /mask and /reason, and /points must equal.
k=$(cat "$work/in/k.txt")
"$dm" run -i "$work/in/mm" -o "$work/run-16UC1" --backend cpu --set 'output.format=[npy,reason,ply]' --set "$k" \
  >"$work/run-mm.log" 2>&1 || { cat "$work/run-mm.log"; exit 1; }
"$dm" run -i "$work/in/m" -o "$work/run-32FC1" --backend cpu --set 'output.format=[npy,reason,ply]' --set "$k" \
  --set 'input.depth=depth/{id}.tiff' >"$work/run-m.log" 2>&1 || { cat "$work/run-m.log"; exit 1; }

# Domains 100..199 by process id, one per case.
base=$((100 + ($$ % 25) * 4))
n=0
for case in $cases; do
  enc=${case%%:*} qos=${case#*:}
  dom=$((base + n)); n=$((n + 1))
  src="ros2:///camera/depth/image_rect_raw?mask=/seg/mask&camera_info=/camera/depth/camera_info&qos=$qos&domain=$dom&config=loopback"
  "$dm" live --source "$src" --publish "ros2://depthmask?mask=1&reason=1&points=1&qos=$qos&domain=$dom&config=loopback" \
    --duration 300 --set live.overflow=block --set backend.kind="$backend" >"$work/live-$enc-$qos.log" 2>&1 &
  live_pid=$!
  if ! "$peer" exchange "$data" "$dom" "$qos" "$enc" "$work/run-$enc"; then
    echo "--- depthmask live ($enc, $qos):"; cat "$work/live-$enc-$qos.log"; exit 1
  fi
  kill "$live_pid"; wait "$live_pid" 2>/dev/null || true; live_pid=""
  echo "  live ($enc, $qos): $(grep -m1 -o 'backend [a-z_]* ([^)]*)' "$work/live-$enc-$qos.log" || echo 'backend ?')"
done
echo "ros2 peer: every case matched ($(printf '%s' "${DDS_PEER_SIZE:-640x480}"), live backend $backend)"
