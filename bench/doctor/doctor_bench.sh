#!/usr/bin/env bash
# Times `depthmask doctor` on a dataset of many listed frames (default 100,000), made cheaply: every
# frame's depth and mask are hard links to one small PNG pair that `depthmask synth` writes. A
# measurement, not a pass/fail test: the issue's target is 10 s for 100,000 frames on 2 cores.
#
#   bash bench/doctor/doctor_bench.sh [--bin build-cpu/depthmask] [--frames 100000] [--keep DIR]
set -euo pipefail

bin=build-cpu/depthmask
frames=100000
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "doctor_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if [[ -n "$keep" ]]; then
  dir="$keep"
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/depthmask-doctor-bench.XXXXXX")
  trap 'rm -rf "$dir"' EXIT
fi

if [[ ! -f "$dir/data/depth/$(printf %06d $((frames - 1))).png" ]]; then
  "$bin" synth --output "$dir/seed" --frames 1 --size 64x48 >/dev/null
  # One process makes every link (a process per link would take minutes).
  python3 - "$dir" "$frames" <<'PY'
import os, shutil, sys
root, n = sys.argv[1], int(sys.argv[2])
for kind in ("depth", "mask"):
    seed = os.path.join(root, "seed", kind, "000000.png")
    dst = os.path.join(root, "data", kind)
    os.makedirs(dst, exist_ok=True)
    for i in range(n):
        # ext4 allows 65,000 links to one file: a fresh copy of the seed every 50,000 frames.
        src = "%s.%d" % (seed, i // 50000)
        if not os.path.exists(src):
            shutil.copyfile(seed, src)
        p = os.path.join(dst, "%06d.png" % i)
        if not os.path.exists(p):
            os.link(src, p)
PY
fi

echo "doctor_bench: $frames frame(s) in $dir/data ($(nproc) core(s))"
TIMEFORMAT="doctor_bench: depthmask doctor took %R s wall, %U s user, %S s system"
time "$bin" doctor --input "$dir/data" --json > "$dir/report.json"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('doctor_bench: report: %d frames listed, %d decoded, %d headers read, %.2f s inside diagnose, exit code %d' % (j['frames'], j['decoded'], j['headers_read'], j['seconds'], j['exit_code']))" "$dir/report.json"
