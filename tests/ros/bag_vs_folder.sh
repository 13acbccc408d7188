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
  # NaN where dropped: what the output bag holds (REP 118), so its pixels compare with the NPY files.
  common=(--set output.format=[tiff,npy] --set output.preview=false --set output.invalid=nan)
  "$bin" run --input "$out/bag" --output "$out/from-bag" "${common[@]}" --set output.format=[tiff,npy,mcap] \
    >"$out/bag.log" 2>&1 ||
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
    continue
  fi
  # The output bag, read back by Foxglove's reader with CRCs checked: every schema parsed, every
  # message decoded, the depth equal to the NPY of the same run, the input's stamps and frame ids kept.
  if ! node "$here/read_bag.mjs" "$out/from-bag" --dump "$out/readback" --out "$out/readback.json" --quiet \
    >"$out/readback.log" 2>&1; then
    echo "FAIL $name: the output bag does not read back:"
    tail -3 "$out/readback.log"
    failed=1
    continue
  fi
  node "$here/read_bag.mjs" "$out/bag" --out "$out/input.json" --quiet >/dev/null
  if ! node - "$out/readback.json" "$out/manifest.json" "$out/readback" "$out/from-bag" "$out/input.json" <<'JS'
const fs = require("fs");
const [summaryFile, manifestFile, dumpDir, runDir, inputFile] = process.argv.slice(2);
const s = JSON.parse(fs.readFileSync(summaryFile)), m = JSON.parse(fs.readFileSync(manifestFile));
const input = JSON.parse(fs.readFileSync(inputFile));
const inputDepth = new Map(input.messages.filter((e) => e.topic === m.topics.depth.name).map((e) => [e.stamp_ns, e.frame_id]));
const fail = (w) => { console.error(w); process.exit(1); };
const depth = s.messages.filter((e) => e.topic === "/depthmask/depth");
const info = s.messages.filter((e) => e.topic === "/depthmask/camera_info");
if (depth.length !== 8 || info.length !== 8) fail(`${depth.length} depth, ${info.length} camera_info messages; expected 8 each`);
const want = m.frames.map((f) => String(f.depth_stamp_ns ?? f.stamp_ns)).sort();
const got = depth.map((e) => e.stamp_ns).sort();
if (JSON.stringify(want) !== JSON.stringify(got)) fail(`stamps ${got} differ from the input's ${want}`);
for (const e of depth) {
  if (e.encoding !== "32FC1") fail(`depth encoding ${e.encoding}`);
  if (e.frame_id !== inputDepth.get(e.stamp_ns)) fail(`depth ${e.stamp_ns}: frame_id '${e.frame_id}', the input's '${inputDepth.get(e.stamp_ns)}'`);
  const id = e.stamp_ns.padStart(19, "0");
  const a = fs.readFileSync(`${dumpDir}/depthmask__depth/${id}.npy`), b = fs.readFileSync(`${runDir}/${id}.npy`);
  if (!a.equals(b)) fail(`frame ${id}: the bag's depth differs from ${id}.npy`);
}
JS
  then
    echo "FAIL $name: the output bag's contents (above)"
    failed=1
    continue
  fi
  echo "ok   $name: 8 frames, tiff and npy byte-identical to the folder run; the output bag reads back equal"
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
# A bag cut short (a recorder killed mid-write): the frames before the cut are masked, the error
# names the file and where it is damaged, and the run exits 1 (input).
cut="$work/cut"
mkdir -p "$cut"
cp "$work/16UC1-zstd-jitter/bag/"* "$cut/"
mcap="$cut/$(cd "$cut" && ls ./*.mcap | head -1)"
truncate -s $(($(stat -c %s "$mcap") * 6 / 10)) "$mcap"
status=0
"$bin" run --input "$mcap" --output "$work/cut-out" --set output.preview=false >"$work/cut.log" 2>&1 || status=$?
kept=$(ls "$work/cut-out"/*.tiff 2>/dev/null | wc -l)
if [ "$status" -eq 1 ] && [ "$kept" -ge 1 ] && [ "$kept" -lt 8 ] && grep -q "$(basename "$mcap").*byte" "$work/cut.log"; then
  echo "ok   truncated bag: $kept frames before the cut masked, exit 1, the error names the file and the byte"
else
  echo "FAIL truncated bag: exit $status, $kept frames written; its log:"
  tail -5 "$work/cut.log"
  failed=1
fi
echo "bag_vs_folder: $cases cases"
exit $failed
