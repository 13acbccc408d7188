#!/usr/bin/env bash
# Soak / load checks (issue 7): a long batch and a long live replay with the process's resident memory,
# open file descriptors, threads and (with nvidia-smi) device memory sampled over time into a CSV, and
# the growth per minute after warm-up fitted by least squares; or, with --leak-check, a short batch
# and a short live run under valgrind's leak checker (what CI runs, through ctest's leak_check).
#
#   scripts/soak.sh [--bin build/depthmask] [--frames 10000] [--live-seconds 600] [--backend auto]
#                   [--size 320x240] [--interval 2] [--work DIR] [--only batch|live] [--formats png16]
#                   [--threads N]
#   scripts/soak.sh --leak-check [--bin build-cpu/depthmask]
#
# The batch: `--frames` frames made from 100 synthetic frames by symbolic links (distinct ids, same
# files: the disk holds 100 inputs), written as 16-bit millimetre PNGs (the smallest output). The live
# run: replay:// of those 100 frames at 30 fps, looping, with the frames published on a local ZeroMQ
# socket (nobody subscribes: the messages are dropped at the socket, as with a slow subscriber).
# `--formats` sets the batch's output.format (a comma list; json alone writes only the sidecars, for
# long GPU batches whose outputs would not fit on the disk); `--threads` sets the batch's run.threads
# (16 on a 2-core machine behaves as the H200's 16-thread host does). `--only` runs one phase (two soak.sh with different --work folders can then run both at once).
# Each phase passes when, after the first 20 % of its samples, RSS grows by less than
# SOAK_MAX_RSS_KIB_PER_MIN (default 1024) KiB per minute (the batch: by less than
# SOAK_MAX_BATCH_BYTES_PER_FRAME, default 1024, bytes per frame: its manifest grows with the frames
# done), device memory by less than
# SOAK_MAX_GPU_MIB_PER_MIN (default 1) MiB per minute, and the fd count ends at most SOAK_FD_SLACK
# (default 2) above its warm-up maximum. Exit 0 when every phase passes, 1 otherwise; the CSV and the logs stay in --work.
set -euo pipefail

bin=""
frames=10000
live_seconds=600
backend=auto
size=320x240
interval=2
work=""
leak_check=0
only=""
formats=png16
threads=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --frames) frames="$2"; shift 2 ;;
    --live-seconds) live_seconds="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --leak-check) leak_check=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --formats) formats="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

case "$only" in ""|batch|live) ;; *) echo "soak.sh: --only takes batch or live, not '$only'" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "$bin" ]; then
  for b in "$root/build/depthmask" "$root/build-cpu/depthmask"; do [ -x "$b" ] && { bin="$b"; break; }; done
fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "soak.sh: no depthmask binary (build it, or pass --bin)" >&2; exit 2; }
own_work=0
[ -n "$work" ] || { work="$(mktemp -d "${TMPDIR:-/tmp}/depthmask-soak.XXXXXX")"; own_work=1; }
mkdir -p "$work"

# --- leak check: short runs under valgrind ---------------------------------------------------------
if [ "$leak_check" = 1 ]; then
  command -v valgrind >/dev/null || { echo "soak.sh --leak-check: SKIPPED: valgrind is not installed (scripts/install-deps.sh installs it)"; exit 77; }
  # Definite and indirect leaks fail; "still reachable" (library caches, TBB's worker pool at exit) and
  # "possibly lost" (pointers into the middle of blocks, which TBB and OpenCV keep) do not.
  vg=(valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
      --error-exitcode=99 --num-callers=30)
  # Can valgrind run this binary at all here? It loads OpenCV's codecs, and through them libraries
  # (libhwy, libjxl ...) that pick CPU-specific code at start-up: valgrind 3.19 knows no AVX-512 and
  # stops with SIGILL before main() on a CPU that has it (AMD Zen 4/5, recent Intel servers). That is
  # the checker failing, not the project: skip saying so. `--version` runs none of the project's
  # masking code, only the loader and the libraries' constructors. Leaks stay checked on every machine
  # by the sanitize stage's LeakSanitizer (docs/RELIABILITY.md).
  pre=0
  valgrind --quiet "$bin" --version >"$work/leak-preflight.log" 2>&1 || pre=$?
  if [ "$pre" != 0 ]; then
    if grep -qE "unhandled instruction bytes|Illegal opcode|SIGILL" "$work/leak-preflight.log"; then
      cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
      avx512=$(grep -qw avx512f /proc/cpuinfo && echo "has AVX-512" || echo "no AVX-512")
      echo "soak.sh --leak-check: SKIPPED: valgrind $(valgrind --version | sed 's/valgrind-//') cannot run" \
           "'$bin --version' on this CPU ($cpu, $avx512): it stops on an instruction it does not know:"
      grep -m 3 -E "unhandled instruction|Illegal opcode|at 0x" "$work/leak-preflight.log" | sed 's/^/  /'
      echo "  LeakSanitizer (scripts/sanitize.sh, CI's sanitize stage) checks leaks on this machine instead."
      exit 77
    fi
    cat "$work/leak-preflight.log"
    echo "leak check: '$bin --version' failed under valgrind (exit $pre)"
    exit 1
  fi
  "$bin" synth --output "$work/data" --frames 4 --size 160x120 >/dev/null
  status=0
  echo "leak check 1/2: a batch of 4 frames, every output format, backend cpu"
  "${vg[@]}" "$bin" run --config "$work/data/depthmask.yaml" --output "$work/out" --backend cpu \
    --set 'output.format=[tiff,npy,exr,png16,ply,json]' >"$work/leak-run.log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then cat "$work/leak-run.log"; echo "leak check: the batch run failed or leaked (exit $status)"; exit 1; fi
  echo "leak check 2/2: live, 20 synthetic frames, published, written"
  "${vg[@]}" "$bin" live --source "synthetic://?size=160x120&fps=0&frames=20" --backend cpu \
    --publish "ipc://$work/live.sock" --output "$work/live-out" >"$work/leak-live.log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then cat "$work/leak-live.log"; echo "leak check: the live run failed or leaked (exit $status)"; exit 1; fi
  echo "leak check: no definite or indirect leak (valgrind $(valgrind --version | sed 's/valgrind-//'))"
  [ "$own_work" = 1 ] && rm -rf "$work"
  exit 0
fi

# --- soak -------------------------------------------------------------------------------------------
csv="$work/samples.csv"
echo "phase,t_s,rss_kib,fds,threads,gpu_mib" >"$csv"
have_smi=0
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && have_smi=1

# The device memory a process holds, in MiB (empty without nvidia-smi).
gpu_mib() {
  [ "$have_smi" = 1 ] || return 0
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
    awk -F', *' -v p="$1" '$1 == p { s += $2 } END { print s + 0 }'
}

# Samples process $2 every $interval s as phase $1 until it ends; returns its exit status.
sample() {
  local phase="$1" pid="$2" t0 now rss fds thr
  t0=$(date +%s.%N)
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    thr=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l || true)
    now=$(date +%s.%N)
    [ -n "$rss" ] && echo "$phase,$(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.2f", a - b }'),$rss,$fds,$thr,$(gpu_mib "$pid")" >>"$csv"
    sleep "$interval"
  done
  wait "$pid"
}

# Least-squares slope of column $2 (per minute) over phase $1's samples after the first 20 %, the fd
# check, and a verdict line. $2 (the batch's frame count; 0 for live) judges RSS per frame instead:
# the batch keeps the manifest in memory, one record (about 0.4 KiB) per finished frame, by design.
# Returns 1 when the phase fails.
verdict() {
  awk -F, -v phase="$1" -v frames="${2:-0}" -v max_rss="${SOAK_MAX_RSS_KIB_PER_MIN:-1024}" \
      -v max_per_frame="${SOAK_MAX_BATCH_BYTES_PER_FRAME:-1024}" -v max_gpu="${SOAK_MAX_GPU_MIB_PER_MIN:-1}" -v fd_slack="${SOAK_FD_SLACK:-2}" '
    $1 == phase { n++; t[n] = $2; r[n] = $3; f[n] = $4; g[n] = ($6 == "" ? 0 : $6) }
    function slope(v,   i, k, st, sv, stt, stv) {
      k = 0; st = sv = stt = stv = 0
      for (i = skip + 1; i <= n; i++) { k++; st += t[i]; sv += v[i]; stt += t[i] * t[i]; stv += t[i] * v[i] }
      if (k < 3 || k * stt - st * st == 0) return 0
      return (k * stv - st * sv) / (k * stt - st * st) * 60
    }
    END {
      if (n < 5) { printf "%s: only %d samples: too short to judge\n", phase, n; exit 1 }
      skip = int(n * 0.2)
      fmax = 0; for (i = 1; i <= skip; i++) if (f[i] > fmax) fmax = f[i]
      if (skip == 0) fmax = f[1]
      # Sockets and pools open and close descriptors as they work: a sample may catch one more.
      fok = (f[n] <= fmax + fd_slack)
      rs = slope(r); gs = slope(g)
      rmin = r[skip + 1]; rmax = r[skip + 1]; for (i = skip + 1; i <= n; i++) { if (r[i] < rmin) rmin = r[i]; if (r[i] > rmax) rmax = r[i] }
      if (frames > 0) {
        # Frames done after warm-up, at the run'"'"'s mean rate.
        per_frame = (r[n] - r[skip + 1]) * 1024 / (frames * (t[n] - t[skip + 1]) / t[n])
        ok = (per_frame < max_per_frame && gs < max_gpu && fok)
        rss_text = sprintf("RSS growth %.0f bytes per frame (limit %d: the manifest records)", per_frame, max_per_frame)
      } else {
        ok = (rs < max_rss && gs < max_gpu && fok)
        rss_text = sprintf("RSS slope %+.1f KiB/min (limit %d)", rs, max_rss)
      }
      printf "%s: %d samples over %.0f s; after warm-up RSS %d..%d KiB, slope %+.1f KiB/min, %s; fds %d at warm-up max, %d at the end; device memory slope %+.2f MiB/min: %s\n",
             phase, n, t[n], rmin, rmax, rs, rss_text, fmax, f[n], gs, ok ? "PASS" : "FAIL"
      exit ok ? 0 : 1
    }' "$csv"
}

w=${size%x*}
h=${size#*x}
echo "soak: $bin, backend $backend, $frames batch frames at $size, live for ${live_seconds}s, sampling every ${interval}s"
echo "soak: work folder $work"
"$bin" synth --output "$work/base" --frames 100 --size "${w}x${h}" >/dev/null
fail=0
if [ "$only" != live ]; then
# The batch dataset: $frames ids over the 100 rendered frames.
mkdir -p "$work/batch/depth" "$work/batch/mask"
if command -v python3 >/dev/null; then  # one process instead of two per frame
  python3 - "$work" "$frames" <<'PY'
import os, sys
work, frames = sys.argv[1], int(sys.argv[2])
for i in range(frames):
    for kind in ("depth", "mask"):
        link = f"{work}/batch/{kind}/{i:06d}.png"
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(f"{work}/base/{kind}/{i % 100:06d}.png", link)
PY
else
  for ((i = 0; i < frames; i++)); do
    src=$(printf "%06d" $((i % 100)))
    id=$(printf "%06d" "$i")
    ln -sf "$work/base/depth/$src.png" "$work/batch/depth/$id.png"
    ln -sf "$work/base/mask/$src.png" "$work/batch/mask/$id.png"
  done
fi
cat >"$work/batch.yaml" <<EOF
input: {root: $work/batch, depth: "depth/{id}.png", mask: "mask/{id}.png"}
output: {format: [$formats], preview: false}
run: {threads: $threads}
EOF

echo "=== batch: $frames frames"
"$bin" run --config "$work/batch.yaml" --output "$work/batch-out" --backend "$backend" >"$work/batch.log" 2>&1 &
status=0
sample batch $! || status=$?
grep -E "frame\(s\):" "$work/batch.log" || true
[ "$status" = 0 ] || { echo "batch: exit $status (log: $work/batch.log)"; fail=1; }
verdict batch "$frames" || fail=1
fi

if [ "$only" != batch ]; then

echo "=== live: replay for ${live_seconds}s"
"$bin" live --source "replay://$work/base?fps=30&loop=1" --backend "$backend" --duration "$live_seconds" \
  --publish "ipc://$work/live.sock" >"$work/live.log" 2>&1 &
status=0
sample live $! || status=$?
grep -E "processed|captured" "$work/live.log" | tail -3 || true
[ "$status" = 0 ] || { echo "live: exit $status (log: $work/live.log)"; fail=1; }
verdict live || fail=1
fi

echo "soak: samples in $csv"
exit "$fail"
