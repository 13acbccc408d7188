#!/usr/bin/env bash
# The x86_64 image built and run by a real Docker engine, as users would, from a clean checkout (root):
#   bash scripts/container-check.sh [HOST_BUILD_DIR]
# 1. dockerd (Debian's docker.io) started here with --bridge=none: builds use --network host, runs
#    --network none (scripts/engine.sh).
# 2. Base images from local parts (no registry is reachable): a debootstrapped Debian 12 root, plus this
#    machine's CUDA 13.0 toolkit for the build stage and its libcudart for the runtime stage, passed
#    to docker/Dockerfile as BUILD_IMAGE / RUNTIME_IMAGE. NVIDIA's Ubuntu bases stay unproven here.
# 3. docker/Dockerfile built with CUDA_ARCHITECTURES="87-real;110-real" (one CUDA compile that also
#    proves the Jetson architectures; the image's own default list is the desktop one).
# 4. The image run: `info` without a GPU (its message and exit code); `run` on the sample mounted as a
#    volume, written as the image's non-root user into a folder prepared for it, outputs (tiff, npy,
#    preview) byte-identical to HOST_BUILD_DIR/depthmask's (default build-cpu; built when missing);
#    `import depthmask` and a masked array equal to NumPy's rule; a `live` container on synthetic://
#    turning healthy, one probing a silent endpoint turning unhealthy; docker-compose 1.29 bringing up
#    the live service with docker/compose.ci.yaml.
# 5. Image sizes against their ceilings; the runtime image holds no compiler, -dev package or source.
# Prints one table last. Idempotent: cached roots and images are reused (DEPTHMASK_CACHE).
set -Eeuo pipefail
# Whatever stops the script says where (a failing command substitution exits without a word otherwise).
trap 'echo "container-check: line $LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
[ "$(id -u)" -eq 0 ] || { echo "container-check: run as root (it installs packages and starts dockerd)" >&2; exit 1; }
. scripts/engine.sh

image=depthmask-ci/x86:cuda13
host_build=${1:-build-cpu}
# Ceiling (MB, as `docker image inspect` reports .Size): the runtime image is Debian 12 with libcudart,
# OpenCV's runtime libraries (and what Debian's imgcodecs pulls: GDAL, ...), GStreamer's base plugins,
# Python and NumPy: 1,107 MB measured on 2026-12-02; the ceiling leaves ~15 % for package updates.
# (NVIDIA's runtime base adds CUDA libraries the binaries do not load: not counted here.)
runtime_ceiling_mb=${DEPTHMASK_RUNTIME_CEILING_MB:-1300}
work=$(mktemp -d /tmp/container-check.XXXXXX)
logs=$repo/build-container
mkdir -p "$logs"
failures=0
fail() { echo "container-check: FAILED: $*" >&2; engine_result "$1" "FAILED"; failures=$((failures + 1)); }
cleanup() {
  $DOCKER rm -f dm-live dm-live-silent >/dev/null 2>&1 || true
  docker-compose -p depthmask -f docker/compose.yaml -f docker/compose.ci.yaml down -t 5 >/dev/null 2>&1 || true
  rm -rf "$work"
  engine_stop
}
trap cleanup EXIT

engine_stage "dockerd (docker.io, --bridge=none)"
engine_start
engine_apt docker-compose

engine_stage "base images (debootstrap Debian 12, CUDA 13.0 toolkit)"
engine_base_images

engine_stage "image build: docker/Dockerfile, sm_87 + sm_110"
if ! $DOCKER build --network host -f docker/Dockerfile \
    --build-arg BUILD_IMAGE="$LOCAL_CUDA_DEVEL" --build-arg RUNTIME_IMAGE="$LOCAL_CUDA_RUNTIME" \
    --build-arg CUDA_ARCHITECTURES="87-real;110-real" -t "$image" -t depthmask:cuda13 . >"$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log" >&2
  echo "container-check: the image build failed (log: $logs/build.log)" >&2
  exit 1
fi
# The cubins the image's binary carries, read from the image itself (a build served from BuildKit's
# cache prints nothing of docker-steps' own check): cuobjdump's list where the toolkit has it, else the
# cubins' sm_NN tags in the binary (the toolkit on these machines ships no cuobjdump).
cid=$($DOCKER create "$image")
$DOCKER cp "$cid:/opt/depthmask/bin/depthmask" "$work/depthmask-image" >/dev/null
$DOCKER rm "$cid" >/dev/null
if [ -x "$CUDA_TOOLKIT/bin/cuobjdump" ]; then elfs=$("$CUDA_TOOLKIT/bin/cuobjdump" --list-elf "$work/depthmask-image" || true)
else elfs=$(grep -ao 'sm_[0-9][0-9]*' "$work/depthmask-image" | sort -u || true)
fi
if grep -qx '.*sm_87\(\.cubin\)\?' <<<"$elfs" && grep -qx '.*sm_110\(\.cubin\)\?' <<<"$elfs"; then
  engine_result "device code in the image" "carries $(grep -o 'sm_[0-9]*' <<<"$elfs" | sort -u | tr '\n' ' ')"
else
  echo "cubins found: ${elfs:-none}" >&2
  fail "device code in the image (expected sm_87 and sm_110 cubins)"
fi

engine_stage "run: info without a GPU"
set +e
info=$($DOCKER run --rm --network none "$image" info 2>&1)
rc=$?
set -e
echo "$info" >"$logs/info.log"
# A CUDA image on a machine without the driver: the clean message, exit 0, auto falls back to cpu.
if [ "$rc" -eq 0 ] && grep -q "needs the NVIDIA driver, but none is loaded" <<<"$info" && grep -q "auto picks: cpu" <<<"$info"; then
  engine_result "info without a GPU" "exit 0, 'needs the NVIDIA driver', auto: cpu"
else
  cat "$logs/info.log" >&2
  fail "info without a GPU (exit $rc)"
fi

engine_stage "run: the sample as a volume, outputs against the host build"
if [ ! -x "$host_build/depthmask" ]; then
  host_build=build-container-ref
  cmake -S . -B "$host_build" -G Ninja -C cmake/release-options.cmake -DDEPTHMASK_CUDA=OFF -DDEPTHMASK_BUILD_TESTS=OFF >/dev/null
  cmake --build "$host_build" --target depthmask >/dev/null
fi
formats='output.format=[tiff, npy]'
"$host_build/depthmask" run --config config/default.yaml --output "$work/host" --set "$formats" >"$logs/host-run.log" 2>&1
# The image's user writes the outputs: a folder prepared for its uid (or run with --user UID:GID).
uid=$($DOCKER run --rm --network none --entrypoint id "$image" -u)
gid=$($DOCKER run --rm --network none --entrypoint id "$image" -g)
mkdir -p "$work/image"
chown "$uid:$gid" "$work/image"
$DOCKER run --rm --network none -v "$repo/data:/data:ro" -v "$repo/config:/config:ro" -v "$work/image:/out" \
  "$image" run --config /config/default.yaml --output /out --set "$formats" >"$logs/image-run.log" 2>&1 ||
  { cat "$logs/image-run.log" >&2; fail "run in the image"; }
if res=$(engine_same_outputs "$work/host" "$work/image"); then
  engine_result "run on the sample vs the host build" "byte-identical, $res"
else
  fail "run on the sample vs the host build: $res"
fi
owners=$(find "$work/image" -type f -printf '%U:%G\n' | sort -u | tr '\n' ' ')
if [ "$owners" = "$uid:$gid " ]; then engine_result "outputs written as" "the image's user ($uid:$gid, non-root)"
else fail "outputs written as $owners (expected $uid:$gid)"
fi

engine_stage "run: import depthmask in the image"
py='
import numpy as np, depthmask
depth = (np.arange(64 * 48, dtype=np.uint16).reshape(48, 64) * 7) % 4000
mask = (np.arange(64 * 48, dtype=np.uint8).reshape(48, 64) % 3).astype(np.uint8)
with depthmask.Masker({"depth": {"scale": 0.001, "max": 2.0}, "mask": {"labels": [1]}}, {"backend.kind": "cpu"}) as m:
    out = m.mask(depth, mask)
metres = depth.astype(np.float32) * np.float32(0.001)
want = np.where((mask == 1) & (depth > 0) & (metres <= np.float32(2.0)), metres, np.float32(0)).astype(np.float32)
assert out.dtype == np.float32 and out.shape == depth.shape
assert out.tobytes() == want.tobytes(), "masked array differs from the rule"
print("depthmask", depthmask.__version__, "numpy", np.__version__, "kept", int((out > 0).sum()))
'
if pyout=$($DOCKER run --rm --network none --entrypoint python3 "$image" -c "$py" 2>&1); then
  engine_result "import depthmask (Python in the image)" "$pyout"
else
  echo "$pyout" >&2
  fail "import depthmask in the image"
fi

# docker inspect's health status, waited for (at most $2 s).
wait_health() {
  local name=$1 want=$2 limit=$3 status=""
  for _ in $(seq "$limit"); do
    status=$($DOCKER inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$name" 2>/dev/null || true)
    [ "$status" = "$want" ] && { echo "$status"; return 0; }
    sleep 1
  done
  echo "${status:-no status}"
  return 1
}

engine_stage "run: health check of live on synthetic://"
# The image's own HEALTHCHECK with shorter intervals than its 30 s (same command, same script).
health=(--health-interval 2s --health-start-period 5s --health-retries 2 -e DEPTHMASK_HEALTH_TIMEOUT=3)
$DOCKER run -d --name dm-live --network none "${health[@]}" -e DEPTHMASK_HEALTH_ENDPOINT=tcp://127.0.0.1:5555 \
  "$image" live --backend cpu --source 'synthetic://?size=320x240&fps=15' --publish tcp://127.0.0.1:5555 >/dev/null
# The same with nothing published where the check listens: must turn unhealthy.
$DOCKER run -d --name dm-live-silent --network none "${health[@]}" -e DEPTHMASK_HEALTH_ENDPOINT=tcp://127.0.0.1:5556 \
  "$image" live --backend cpu --source 'synthetic://?size=320x240&fps=15' --publish tcp://127.0.0.1:5555 >/dev/null
if st=$(wait_health dm-live healthy 60); then engine_result "live on synthetic:// (health check)" "healthy"
else $DOCKER logs dm-live 2>&1 | tail -20 >&2; fail "live health: $st"
fi
if st=$(wait_health dm-live-silent unhealthy 60); then engine_result "live, check on a silent endpoint" "unhealthy (as it must)"
else fail "silent endpoint health: $st (expected unhealthy)"
fi
$DOCKER stop -t 10 dm-live >/dev/null
live_rc=$($DOCKER inspect -f '{{.State.ExitCode}}' dm-live)
[ "$live_rc" = 0 ] && engine_result "live stopped by docker stop (SIGTERM)" "exit 0" || fail "live exit on SIGTERM: $live_rc"
$DOCKER rm -f dm-live dm-live-silent >/dev/null

engine_stage "compose: docker-compose 1.29, live with compose.ci.yaml"
export DEPTHMASK_OUT=$work/compose-out  # not the checkout's out/ (docker would create it as root)
# The live service's source is a variable: the base file, interpolated as a user would set it.
if DEPTHMASK_SOURCE=replay:///data/sample docker-compose -p depthmask -f docker/compose.yaml config |
     grep -q -- "- replay:///data/sample$"; then :; else fail "compose: DEPTHMASK_SOURCE does not reach the live command"; fi
compose=(docker-compose -p depthmask -f docker/compose.yaml -f docker/compose.ci.yaml)
"${compose[@]}" --profile x86 config >"$logs/compose-config.yaml"
if "${compose[@]}" --profile x86 up -d --no-build live >"$logs/compose.log" 2>&1; then
  cid=$("${compose[@]}" --profile x86 ps -q live)
  if st=$(wait_health "$cid" healthy 60); then
    engine_result "compose: live service (synthetic://)" "healthy, network none, no devices or GPU"
  else
    "${compose[@]}" --profile x86 logs live 2>&1 | tail -20 >&2
    fail "compose live health: $st"
  fi
else
  cat "$logs/compose.log" >&2
  fail "compose up"
fi
"${compose[@]}" --profile x86 down -t 10 >/dev/null 2>&1 || true

engine_stage "image sizes and contents"
size_mb() { echo $(($($DOCKER image inspect -f '{{.Size}}' "$1") / 1000000)); }
rt=$(size_mb "$image")
dev=$(size_mb "$LOCAL_CUDA_DEVEL")
base=$(size_mb "$LOCAL_CUDA_RUNTIME")
if [ "$rt" -le "$runtime_ceiling_mb" ]; then
  engine_result "runtime image size" "$rt MB (ceiling $runtime_ceiling_mb; its base $base MB)"
else
  fail "runtime image size: $rt MB over the ceiling of $runtime_ceiling_mb MB"
fi
engine_result "build base (Debian 12 + CUDA toolkit)" "$dev MB"
contents=$($DOCKER run --rm --network none --entrypoint bash "$image" -c '
  for c in cc gcc g++ c++ clang nvcc cmake make; do command -v "$c" >/dev/null && echo "compiler: $c"; done
  dpkg-query -W -f "\${Package}\n" | grep -- "-dev$" | sed "s/^/dev package: /"
  [ -e /src ] && echo "source: /src"
  find /opt/depthmask \( -name "*.cpp" -o -name "*.cu" -o -name "*.h" -o -name "CMakeLists.txt" \) | sed "s/^/source: /"
  true')
if [ -z "$contents" ]; then engine_result "runtime image holds" "no compiler, no -dev package, no source"
else echo "$contents" >&2; fail "runtime image contents: $(head -3 <<<"$contents" | tr '\n' ';')"
fi

engine_table
[ "$failures" -eq 0 ] || { echo "container-check: $failures check(s) failed" >&2; exit 1; }
echo "container-check: all checks passed"
