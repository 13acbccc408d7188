#!/usr/bin/env bash
# Live at 30 fps with files and previews (docs/PERFORMANCE.md, "The preview PNG"): a paced replay of
# synthetic frames (`depthmask synth`, looped) through `depthmask live --output` on a backend, with and
# without output.preview, RUNS times each (the binaries taking turns); prints the frames dropped (overflow) per run as a Markdown
# table. Give --bin twice or more to compare binaries (a build before a change and after). A
# measurement, not a test: drops depend on the machine and its load.
#   bench/live/preview_bench.sh [--bin DEPTHMASK]... [--frames N] [--size WxH] [--fps F] [--backend KIND]
#                               [--runs R] [--work DIR]
set -euo pipefail
bins=() frames=150 size=640x480 fps=30 backend=cpu runs=3 work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --fps) fps=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "preview_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || bins=(build/depthmask)
[ -n "$work" ] || { work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; }
mkdir -p "$work"
# 30 distinct frames, looped: decoding stays ahead of 30 fps, as a camera's frames would be.
[ -f "$work/data/intrinsics.yaml" ] || "${bins[0]}" synth -o "$work/data" --frames 30 --size "$size" >/dev/null

# One run: prints "captured processed dropped written".
run() {
  local bin=$1 preview=$2
  rm -rf "$work/out"
  "$bin" live --backend "$backend" --frames "$frames" --output "$work/out" --set "output.preview=$preview" \
    --set live.stats_interval=0 --source "replay://$work/data?fps=$fps&loop=1" >"$work/live.log" 2>&1 ||
    { tail -5 "$work/live.log" >&2; exit 1; }
  awk '/frame\(s\) captured/ {c=$3; p=$6; d=$8} /written:/ {w=$2} END {print c, p, d, w}' "$work/live.log"
}

# The binaries take turns run by run, so a change in the machine's load falls on each alike.
declare -A drops written
for _ in $(seq "$runs"); do
  for i in "${!bins[@]}"; do
    for preview in false true; do
      read -r _ _ d w < <(run "${bins[$i]}" "$preview")
      drops[$i,$preview]="${drops[$i,$preview]:-}${drops[$i,$preview]:+, }$d"
      written[$i,$preview]="${written[$i,$preview]:-}${written[$i,$preview]:+, }$w"
    done
  done
done
echo "| binary | output.preview | frames dropped (overflow) per run, of $frames at $fps fps $size, backend $backend, $(nproc) cores | written |"
echo "|---|---|---|---|"
for i in "${!bins[@]}"; do
  for preview in false true; do echo "| ${bins[$i]} | $preview | ${drops[$i,$preview]} | ${written[$i,$preview]} |"; done
done
