#!/usr/bin/env bash
# A ROS 2 bag against a folder of PNGs, whole processes (docs/PERFORMANCE.md, "ROS 2 bags"): the same
# synthetic frames (`depthmask synth --no-color`: 16UC1 depth + mono8 mask, as the issue's benchmark
# names them) as a zstd MCAP bag and
# as a PNG folder; `depthmask run` bag -> TIFFs, folder -> TIFFs, and bag -> MCAP, and beside them the
# same frames as an lz4 and an uncompressed bag (synth --compression) -> TIFFs, RUNS rounds of all
# five (round robin), in one run of this script. Prints a Markdown table with each case's median run
# (by wall time) and its CPU time (user + system, from /usr/bin/time); a measurement, not a test.
#   bench/rosbag/bag_bench.sh [--bin DEPTHMASK] [--frames N] [--size WxH] [--backend KIND] [--runs R] [--work DIR]
set -euo pipefail
bin=build/depthmask frames=1000 size=640x480 backend=cpu runs=2 work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "bag_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$work" ] || { work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; }
mkdir -p "$work"
t0=$(date +%s.%N)
[ -f "$work/bag/metadata.yaml" ] || "$bin" synth -o "$work/bag" --frames "$frames" --size "$size" --format mcap --no-color >/dev/null
for c in lz4 none; do
  [ -f "$work/bag-$c/metadata.yaml" ] ||
    "$bin" synth -o "$work/bag-$c" --frames "$frames" --size "$size" --format mcap --no-color --compression "$c" >/dev/null
done
[ -f "$work/folder/intrinsics.yaml" ] || "$bin" synth -o "$work/folder" --frames "$frames" --size "$size" --no-color >/dev/null
echo "bag_bench: $frames frames of $size ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s;" \
  "bag $(du -sm "$work/bag" | cut -f1) MB (lz4 $(du -sm "$work/bag-lz4" | cut -f1) MB, uncompressed" \
  "$(du -sm "$work/bag-none" | cut -f1) MB), folder $(du -sm "$work/folder" | cut -f1) MB" >&2

# One `depthmask run`: appends "wall cpu" seconds to $work/NAME.times.
one() {  # NAME INPUT FORMATS
  local s e
  rm -rf "$work/out"
  sync
  s=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/time.txt" "$bin" run --input "$2" --output "$work/out" \
    --backend "$backend" --set "output.format=$3" --set output.preview=false >"$work/run.log" 2>&1 ||
    { tail -5 "$work/run.log" >&2; exit 1; }
  e=$(date +%s.%N)
  echo "$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b-a}') $(awk '{printf "%.2f", $1 + $2}' "$work/time.txt")" \
    >>"$work/$1.times"
}
# Round robin, so that every case sees the same drift of a shared machine (its speed moved by 1.5x
# between runs minutes apart here); each case's median run by wall time counts.
names=(folder bag-tiff bag-mcap lz4-tiff none-tiff)
inputs=("$work/folder" "$work/bag" "$work/bag" "$work/bag-lz4" "$work/bag-none")
formats=("[tiff]" "[tiff]" "[mcap]" "[tiff]" "[tiff]")
rm -f "$work"/*.times
for _ in $(seq "$runs"); do
  for i in "${!names[@]}"; do one "${names[$i]}" "${inputs[$i]}" "${formats[$i]}"; done
done
median() { sort -n "$work/$1.times" | awk '{l[NR] = $0} END {print l[int((NR + 1) / 2)]}'; }
folder=$(median folder)
row() { local m; m=$(median "$2"); awk -v n="$frames" -v t="${m% *}" -v c="${m#* }" -v f="${folder% *}" -v name="$1" \
  'BEGIN{printf "| %s | %.2f s | %.0f frames/s | %.2fx | %.2f s |\n", name, t, n / t, f / t, c}'; }
echo "| $frames frames of $size, backend $backend, $(nproc) cores | wall (median of $runs) | rate | vs folder -> TIFFs | CPU (user + sys) |"
echo "|---|---|---|---|---|"
row "PNG folder -> TIFFs" folder
row "zstd MCAP bag -> TIFFs" bag-tiff
row "zstd MCAP bag -> MCAP bag" bag-mcap
row "lz4 MCAP bag -> TIFFs" lz4-tiff
row "uncompressed MCAP bag -> TIFFs" none-tiff
