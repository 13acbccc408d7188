#!/usr/bin/env bash
# ros2:// against an independent DDS (issue 31): the Fast-DDS peer (dds_peer.cpp) publishes the real APC
# captures as a camera driver would and subscribes to what `depthmask live` publishes; every frame that
# comes back (/depthmask/depth, /mask, /reason, /points) must equal, bit for bit, what `depthmask run`
# writes for the same frames as a folder (.npy, .reason.png, .ply).
# Both depth encodings (16UC1 mm, 32FC1 m) and both QoS profiles (sensor_data, default), each on a
# DDS domain of its own (parallel tests do not meet), on loopback only (config=loopback; the peer
# whitelists 127.0.0.1). Exit 77 with the reason when the peer or the captures are absent.
# Usage: peer_test.sh DEPTHMASK PEER|- DATA WHY_NO_PEER
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
k='input.intrinsics={fx: 615.195190, fy: 615.195251, cx: 298.442688, cy: 247.519196}'
"$dm" run -i "$work/in/mm" -o "$work/run-16UC1" --set 'output.format=[npy,reason,ply]' --set "$k" \
  >"$work/run-mm.log" 2>&1 || { cat "$work/run-mm.log"; exit 1; }
"$dm" run -i "$work/in/m" -o "$work/run-32FC1" --set 'output.format=[npy,reason,ply]' --set "$k" \
  --set 'input.depth=depth/{id}.tiff' >"$work/run-m.log" 2>&1 || { cat "$work/run-m.log"; exit 1; }

# Domains 100..199 by process id, one per case.
base=$((100 + ($$ % 25) * 4))
n=0
for enc in 16UC1 32FC1; do
  for qos in sensor_data default; do
    dom=$((base + n)); n=$((n + 1))
    src="ros2:///camera/depth/image_rect_raw?mask=/seg/mask&camera_info=/camera/depth/camera_info&qos=$qos&domain=$dom&config=loopback"
    "$dm" live --source "$src" --publish "ros2://depthmask?mask=1&reason=1&points=1&qos=$qos&domain=$dom&config=loopback" \
      --duration 60 --set live.overflow=block >"$work/live-$enc-$qos.log" 2>&1 &
    live_pid=$!
    if ! "$peer" exchange "$data" "$dom" "$qos" "$enc" "$work/run-$enc"; then
      echo "--- depthmask live ($enc, $qos):"; cat "$work/live-$enc-$qos.log"; exit 1
    fi
    kill "$live_pid"; wait "$live_pid" 2>/dev/null || true; live_pid=""
  done
done
echo "ros2 peer: every case matched"
