#!/usr/bin/env bash
# depthmask reads ROS 2 bags exactly: bags written by Foxglove's own MCAP/CDR writer (make_bag.mjs)
# from the real APC captures, in every storage, encoding and chunk option, are masked by `depthmask
# run` bit-identically to a folder run of the exact pixels each bag holds (make_bag.mjs's fixture:
# 16-bit PNG millimetres or float TIFF metres). Exit 77 (ctest: skipped) with the reason when node,
# tests/ros/node_modules or ../shared/data is missing.
#   tests/ros/bag_vs_folder.sh DEPTHMASK_BIN [SHARED_DATA]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$1"
data="${2:-$here/../../../shared/data}"
scene="$data/apc-vision-toolbox/scene-0000"
command -v node >/dev/null || { echo "bag_vs_folder: skipped: no node (scripts/install-deps.sh installs it)"; exit 77; }
[ -d "$here/node_modules/@mcap/core" ] || { echo "bag_vs_folder: skipped: no tests/ros/node_modules (npm ci)"; exit 77; }
[ -d "$scene" ] || { echo "bag_vs_folder: skipped: no real captures at $scene (../shared/data)"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
frames=""
for i in 0 1 2 3 4 5 6 7; do
  n=$(printf %06d $i)
  frames+="${frames:+,}{\"depth\":\"$scene/frame-$n.depth.png\",\"mask\":\"$scene/segm/frame-$n.segm.png\",\"color\":\"$scene/frame-$n.color.png\"}"
done
cat >"$work/spec.json" <<EOF
{"apc": true, "intrinsics": {"fx": 615.19519, "fy": 615.195251, "cx": 298.442688, "cy": 247.519196, "width": 640, "height": 480},
 "frames": [$frames]}
EOF

failed=0
cases=0
# name | make_bag options
while IFS='|' read -r name opts; do
  [ -n "$name" ] || continue
  cases=$((cases + 1))
  out="$work/$name"
  # shellcheck disable=SC2086
  node "$here/make_bag.mjs" "$work/spec.json" "$out" $opts >/dev/null
  fix=$(node -e 'const m=require(process.argv[1]).fixture; process.stdout.write([m["input.depth"],m["input.mask"],m["input.color"]].join(" "))' "$out/manifest.json")
  read -r fdepth fmask fcolor <<<"$fix"
  common=(--set output.format=[tiff,npy] --set output.preview=false)
  "$bin" run --input "$out/bag" --output "$out/from-bag" "${common[@]}" >"$out/bag.log" 2>&1 ||
    { echo "FAIL $name: run on the bag failed:"; tail -5 "$out/bag.log"; failed=1; continue; }
  "$bin" run --input "$out/fixture" --output "$out/from-folder" "${common[@]}" --set input.layout=pattern \
    --set "input.depth=$fdepth" --set "input.mask=$fmask" --set "input.color=$fcolor" \
    --set "input.intrinsics=$out/fixture/intrinsics.yaml" >"$out/folder.log" 2>&1 ||
    { echo "FAIL $name: run on the fixture folder failed:"; tail -5 "$out/folder.log"; failed=1; continue; }
  n=0
  bad=""
  for f in "$out/from-folder"/*.tiff "$out/from-folder"/*.npy; do
    n=$((n + 1))
    cmp -s "$f" "$out/from-bag/$(basename "$f")" || bad+=" $(basename "$f")"
  done
  if [ "$n" -ne 16 ] || [ -n "$bad" ]; then
    echo "FAIL $name: $n files; differ or missing:${bad:- (file count)}"
    failed=1
  else
    echo "ok   $name: 8 frames, tiff and npy byte-identical to the folder run"
  fi
done <<'EOF'
16UC1-zstd-jitter|--jitter-ms 3
16UC1-lz4-noindex|--compression lz4 --no-index
16UC1-none-split2|--compression none --split 2
16UC1-nochunks|--no-chunks
mono16-bgr8|--depth mono16 --color bgr8
32FC1-jpeg-lz4|--depth 32FC1 --color jpeg --compression lz4
32FC1-padded-bigendian|--depth 32FC1 --step-padding 6 --bigendian
cdepth-png-16UC1|--depth compressedDepth-png
cdepth-png-32FC1|--depth compressedDepth-png-32FC1
cdepth-rvl-16UC1|--depth compressedDepth-rvl --color png
cdepth-rvl-32FC1|--depth compressedDepth-rvl-32FC1
sqlite3|--storage sqlite3 --jitter-ms 2
sqlite3-message-zstd|--storage sqlite3 --message-compression zstd
mcap-message-zstd|--message-compression zstd
EOF
echo "bag_vs_folder: $cases cases"
exit $failed
