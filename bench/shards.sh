#!/usr/bin/env bash
# Times N shard processes at once (`depthmask run --shard K/N`, all into one output folder) against
# one process over the same frames, whole processes from start to exit, and prints a short table. A
# measurement, not a test: e.g. on a GPU machine, four shards on one GPU:
#
#   bash bench/shards.sh [--bin build-cpu/depthmask] [--shards 4] [--frames 400] [--size 640x480]
#                        [--backend auto|copy|zero_copy|managed|cpu] [--format tiff] [--repeat 3]
#                        [--keep DIR]
#
# Each row is the best of --repeat runs into a fresh output folder; frames/s counts every frame over
# the wall time of the slowest process. The outputs of the last sharded run are compared with the
# single process's, byte for byte.
set -euo pipefail

bin=build-cpu/depthmask
shards=4
frames=400
size=640x480
backend=auto
format=tiff
repeat=3
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --format) format="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "shards: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "shards: --shards must be a positive integer" >&2; exit 2; }

if [[ -n "$keep" ]]; then
  dir="$keep"
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/depthmask-shards-bench.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi

if [[ ! -f "$dir/data/depth/$(printf %06d $((frames - 1))).png" ]]; then
  rm -rf "$dir/data"
  "$bin" synth --output "$dir/data" --frames "$frames" --size "$size" >/dev/null
fi
common=(run --config "$dir/data/depthmask.yaml" --backend "$backend" --set "output.format=$format"
        --set logging.level=warn)

now() { date +%s.%N; }

# One run of `n` processes at once (n = 0: one unsharded process) into a fresh folder; prints seconds.
timed() {
  local n="$1" out="$dir/out-$1" t0 t1 k
  rm -rf "$out"
  local pids=()
  t0=$(now)
  if [[ "$n" == 0 ]]; then
    "$bin" "${common[@]}" --output "$out" >"$dir/log-0-0" 2>&1 &
    pids+=($!)
  else
    for ((k = 0; k < n; k++)); do
      "$bin" "${common[@]}" --output "$out" --shard "$k/$n" >"$dir/log-$n-$k" 2>&1 &
      pids+=($!)
    done
  fi
  local failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  t1=$(now)
  if [[ "$failed" != 0 ]]; then
    echo "shards: a run failed; its log:" >&2
    cat "$dir"/log-"$n"-* >&2
    exit 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

best() {
  local n="$1" b="" t i
  for ((i = 0; i < repeat; i++)); do
    t=$(timed "$n")
    if [[ -z "$b" ]] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b="$t"; fi
  done
  echo "$b"
}

one=$(best 0)
many=$(best "$shards")

# The sharded folder holds the single process's outputs, byte for byte (bookkeeping aside).
if ! diff -rq -x 'depthmask-manifest*' -x 'depthmask-run*' "$dir/out-0" "$dir/out-$shards" >/dev/null; then
  echo "shards: the sharded outputs differ from the single process's" >&2
  exit 1
fi

backend_line=$(grep -h -m1 -o 'backend: [a-z_]*' "$dir/log-0-0" || true)
echo "depthmask shards bench: $frames frames of $size, format $format, --backend $backend" \
     "(${backend_line:-see the logs}), $(nproc) cores, best of $repeat"
printf '| %-28s | %8s | %9s | %7s |\n' "processes" "seconds" "frames/s" "speedup"
printf '|%s|%s|%s|%s|\n' "------------------------------" "----------" "-----------" "---------"
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
printf '| %-28s | %8.2f | %9.1f | %7s |\n' "1 (unsharded)" "$one" "$(div "$frames" "$one")" "1.00x"
printf '| %-28s | %8.2f | %9.1f | %6.2fx |\n' "$shards (--shard K/$shards at once)" "$many" "$(div "$frames" "$many")" \
  "$(div "$one" "$many")"
echo "outputs: identical"
