#!/usr/bin/env bash
# A ROS 2 bag against a folder of PNGs, whole processes (docs/PERFORMANCE.md, "ROS 2 bags"): the same
# synthetic frames (`depthmask synth --no-color`: 16UC1 depth + mono8 mask, as the issue's benchmark
# names them) as a zstd MCAP bag and
# as a PNG folder; `depthmask run` bag -> TIFFs, folder -> TIFFs, and bag -> MCAP, each RUNS times
# (the fastest counts), in one run of this script. Prints a Markdown table with each best run's CPU
# time (user + system, from /usr/bin/time), which other load on the machine disturbs less than the
# wall time; a measurement, not a test.
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
[ -f "$work/folder/intrinsics.yaml" ] || "$bin" synth -o "$work/folder" --frames "$frames" --size "$size" --no-color >/dev/null
echo "bag_bench: $frames frames of $size ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s;" \
  "bag $(du -sm "$work/bag" | cut -f1) MB, folder $(du -sm "$work/folder" | cut -f1) MB" >&2

best() {  # "wall cpu" seconds of the best of RUNS `depthmask run`s with the given input and settings
  local input=$1 formats=$2 b="" t s e
  for _ in $(seq "$runs"); do
    rm -rf "$work/out"
    sync
    s=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$work/time.txt" "$bin" run --input "$input" --output "$work/out" \
      --backend "$backend" --set "output.format=$formats" --set output.preview=false >"$work/run.log" 2>&1 ||
      { tail -5 "$work/run.log" >&2; exit 1; }
    e=$(date +%s.%N)
    t=$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b-a}')
    if [ -z "$b" ] || awk -v t="$t" -v b="${b% *}" 'BEGIN{exit !(t < b)}'; then
      b="$t $(awk '{printf "%.2f", $1 + $2}' "$work/time.txt")"
    fi
  done
  echo "$b"
}
folder=$(best "$work/folder" "[tiff]")
bagt=$(best "$work/bag" "[tiff]")
bagm=$(best "$work/bag" "[mcap]")
row() { awk -v n="$frames" -v t="${2% *}" -v c="${2#* }" -v f="${folder% *}" -v name="$1" \
  'BEGIN{printf "| %s | %.2f s | %.0f frames/s | %.2fx | %.2f s |\n", name, t, n / t, f / t, c}'; }
echo "| $frames frames of $size, backend $backend, $(nproc) cores | wall (best of $runs) | rate | vs folder -> TIFFs | CPU (user + sys) |"
echo "|---|---|---|---|---|"
row "PNG folder -> TIFFs" "$folder"
row "zstd MCAP bag -> TIFFs" "$bagt"
row "zstd MCAP bag -> MCAP bag" "$bagm"
