# Shared by scripts/container-check.sh and scripts/arm64-check.sh (sourced, not run): a Docker engine
# started by us, local base images made from Debian roots, and qemu-user for arm64. The Slurm and
# Kubernetes checks (slurm-cluster.sh, slurm-check.sh, k8s-index-check.sh) use its package installs,
# stage timer, results table and output comparison.
#
# No registry is reachable on the machines these run on, so nothing is pulled: the base images the
# Dockerfiles name come from `debootstrap` roots imported (FROM scratch + ADD, keeping their platform) and passed to the
# builds as build arguments (their names say what they are: depthmask-local/...). Roots are cached in
# DEPTHMASK_CACHE (default /var/cache/depthmask) so later runs on the same machine skip debootstrap.
#
#   engine_start                 install docker.io if missing, start dockerd (--bridge=none) unless one
#                                answers already; engine_stop (in the caller's EXIT trap) stops it
#   engine_root ARCH             a Debian 12 minbase root as a tar in the cache (amd64 or arm64)
#   engine_base_images [arm64]   import the local base images (amd64; and arm64 with the argument)
#   engine_qemu                  qemu-user-static + binfmt-support, qemu-aarch64 enabled with the F flag
#   engine_apt PKG...            apt-get install what is missing (never removes anything)
#   engine_stage NAME            start a timed stage; engine_table prints them all
#   engine_same_outputs A B      two output folders' frame outputs byte for byte
# Docker is Debian's client /usr/bin/docker (the first `docker` on PATH may be another client without
# BuildKit), with DOCKER_BUILDKIT=1 and no `# syntax=` lines in the Dockerfiles (they pull a frontend).

shopt -s inherit_errexit
DOCKER=/usr/bin/docker
export DOCKER_BUILDKIT=1
DEPTHMASK_CACHE=${DEPTHMASK_CACHE:-/var/cache/depthmask}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SUITE=bookworm
# The local base images (docker/Dockerfile and docker/Dockerfile.jetson take them as build arguments).
LOCAL_DEBIAN=depthmask-local/debian:bookworm
LOCAL_DEBIAN_ARM64=depthmask-local/debian:bookworm-arm64
LOCAL_CUDA_DEVEL=depthmask-local/cuda:13.0-devel-debian12
LOCAL_CUDA_RUNTIME=depthmask-local/cuda:13.0-runtime-debian12
CUDA_TOOLKIT=${CUDA_TOOLKIT:-/usr/local/cuda-13.0}

_engine_started=0
_engine_stage_names=()
_engine_stage_secs=()
_engine_stage_start=0
_engine_results=()

engine_log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

engine_apt() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  engine_log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # Check first that nothing of the host's would be removed (apt-get -s prints "Remv" lines). A
  # here-string, not a pipe: grep -q leaving at its first match would fail apt-get with SIGPIPE, and
  # under pipefail the refusal would not happen.
  if grep -q '^Remv ' <<<"$(apt-get install -s -y -q --no-install-recommends "${missing[@]}")"; then
    echo "engine: installing ${missing[*]} would remove host packages; refusing" >&2
    return 1
  fi
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

engine_stop() {
  [ "$_engine_started" = 1 ] || return 0
  local pid
  pid=$(cat /run/depthmask-dockerd.pid 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  _engine_started=0
}

engine_start() {
  engine_apt docker.io
  if $DOCKER version >/dev/null 2>&1; then
    engine_log "dockerd already running: using it"
    return 0
  fi
  # --bridge=none: no docker0 bridge on a private range (builds use --network host, runs --network
  # none); without a bridge there is nothing for dockerd to write into iptables either.
  engine_log "starting dockerd (log: /var/log/depthmask-dockerd.log)"
  dockerd --bridge=none --iptables=false --pidfile /run/depthmask-dockerd.pid \
    >/var/log/depthmask-dockerd.log 2>&1 &
  _engine_started=1
  for _ in $(seq 60); do
    $DOCKER version >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "engine: dockerd did not answer within 60 s; its log:" >&2
  tail -20 /var/log/depthmask-dockerd.log >&2
  return 1
}

# A Debian 12 minbase root, as a tar (numeric owners) in the cache: debootstrap once per machine.
engine_root() {
  local arch=$1 tar="$DEPTHMASK_CACHE/roots/$DEBIAN_SUITE-$1-minbase.tar"
  if [ ! -s "$tar" ]; then
    engine_apt debootstrap
    [ "$arch" = amd64 ] || engine_qemu
    local dir
    mkdir -p "$DEPTHMASK_CACHE/roots"
    dir=$(mktemp -d "$DEPTHMASK_CACHE/roots/.root-$arch.XXXXXX")
    engine_log "debootstrap $DEBIAN_SUITE $arch (minbase) from $DEBIAN_MIRROR"
    debootstrap --arch="$arch" --variant=minbase "$DEBIAN_SUITE" "$dir" "$DEBIAN_MIRROR" \
      >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; rm -rf "$dir"; return 1; }
    # The same archive as this machine (with its updates and security suites) where it has Debian's
    # deb822 sources; debootstrap's own line (the release only) otherwise.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      cp /etc/apt/sources.list.d/debian.sources "$dir/etc/apt/sources.list.d/debian.sources"
      rm -f "$dir/etc/apt/sources.list"
    fi
    # apt's lists and the downloaded packages are not part of a base image.
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/archives/*.deb
    tar -C "$dir" --numeric-owner -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$dir" "$dir.log"
  fi
  echo "$tar"
}

_engine_has_image() { $DOCKER image inspect "$1" >/dev/null 2>&1; }

# A root tar as an image of its platform (docker import would record this machine's architecture).
_engine_import() {
  local tar=$1 platform=$2 tag=$3 ctx
  ctx=$(mktemp -d)
  ln "$tar" "$ctx/root.tar" 2>/dev/null || cp "$tar" "$ctx/root.tar"
  printf '%s\n' 'FROM scratch' 'ADD root.tar /' \
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' 'CMD ["bash"]' >"$ctx/Dockerfile"
  $DOCKER build -q --platform "$platform" -t "$tag" "$ctx" >/dev/null
  rm -rf "$ctx"
}

engine_base_images() {
  local root
  if ! _engine_has_image "$LOCAL_DEBIAN"; then
    root=$(engine_root amd64)
    _engine_import "$root" linux/amd64 "$LOCAL_DEBIAN"
  fi
  if [ "${1:-}" = arm64 ] && ! _engine_has_image "$LOCAL_DEBIAN_ARM64"; then
    root=$(engine_root arm64)
    _engine_import "$root" linux/arm64 "$LOCAL_DEBIAN_ARM64"
  fi
  [ "${1:-}" = arm64 ] && return 0
  # The CUDA images, as NVIDIA's devel/runtime pair would be: the toolkit of this machine (compiler,
  # headers, nvvm, cudart) on the Debian root; the runtime one carries libcudart only.
  if ! _engine_has_image "$LOCAL_CUDA_DEVEL" || ! _engine_has_image "$LOCAL_CUDA_RUNTIME"; then
    [ -x "$CUDA_TOOLKIT/bin/nvcc" ] || { echo "engine: no CUDA toolkit at $CUDA_TOOLKIT (CUDA_TOOLKIT=...)" >&2; return 1; }
    local ctx
    ctx=$(mktemp -d)
    local tk=$ctx/cuda
    mkdir -p "$tk/lib" "$tk/targets/x86_64-linux"
    cp -a "$CUDA_TOOLKIT/bin" "$CUDA_TOOLKIT/include" "$CUDA_TOOLKIT/nvvm" "$tk/"
    cp -a "$CUDA_TOOLKIT"/lib/libcudart* "$CUDA_TOOLKIT"/lib/libcudadevrt.a "$CUDA_TOOLKIT"/lib/libculibos.a \
          "$CUDA_TOOLKIT/lib/stubs" "$CUDA_TOOLKIT/lib/cmake" "$tk/lib/"
    ln -s lib "$tk/lib64"
    ln -s ../../include "$tk/targets/x86_64-linux/include"
    ln -s ../../lib "$tk/targets/x86_64-linux/lib"
    cat >"$ctx/Dockerfile.devel" <<EOF
FROM $LOCAL_DEBIAN
COPY cuda /usr/local/cuda-13.0
RUN ln -s cuda-13.0 /usr/local/cuda && echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/cuda.conf && ldconfig
ENV PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CUDA_HOME=/usr/local/cuda
EOF
    cat >"$ctx/Dockerfile.runtime" <<EOF
FROM $LOCAL_DEBIAN
COPY cuda/lib/ /usr/local/cuda-13.0/lib64/
RUN rm -rf /usr/local/cuda-13.0/lib64/stubs /usr/local/cuda-13.0/lib64/cmake /usr/local/cuda-13.0/lib64/*.a \
 && ln -s cuda-13.0 /usr/local/cuda && echo /usr/local/cuda/lib64 >/etc/ld.so.conf.d/cuda.conf && ldconfig
EOF
    $DOCKER build -q --network host -f "$ctx/Dockerfile.devel" -t "$LOCAL_CUDA_DEVEL" "$ctx" >/dev/null
    $DOCKER build -q --network host -f "$ctx/Dockerfile.runtime" -t "$LOCAL_CUDA_RUNTIME" "$ctx" >/dev/null
    rm -rf "$ctx"
  fi
}

engine_qemu() {
  engine_apt qemu-user-static binfmt-support
  [ -f /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
  local entry=/proc/sys/fs/binfmt_misc/qemu-aarch64
  if ! grep -q '^enabled' "$entry" 2>/dev/null; then
    echo "engine: qemu-aarch64 is not registered with binfmt_misc (update-binfmts --display qemu-aarch64)" >&2
    return 1
  fi
  # F (fix binary): the kernel opens the interpreter now, so arm64 programs run inside containers and
  # chroots that do not have /usr/libexec/qemu-binfmt themselves.
  grep -q '^flags:.*F' "$entry" || { echo "engine: qemu-aarch64 is registered without the F flag: $(grep flags "$entry")" >&2; return 1; }
}

engine_stage() {
  local now
  now=$(date +%s)
  if [ ${#_engine_stage_names[@]} -gt 0 ]; then
    _engine_stage_secs+=($((now - _engine_stage_start)))
  fi
  [ -n "${1:-}" ] || return 0
  _engine_stage_names+=("$1")
  _engine_stage_start=$now
  echo "--- $1"
}

# engine_same_outputs A B: the frame outputs of two runs' folders byte for byte, leaving out the .json
# files (the sidecars, the manifest and the run record hold absolute paths). Prints "N files (kinds)",
# or what differs, and fails then.
engine_same_outputs() {
  local a=$1 b=$2 files differ
  files=$(cd "$a" && find . -type f ! -name '*.json' | sort)
  [ -n "$files" ] || { echo "no outputs in $a"; return 1; }
  [ "$files" = "$(cd "$b" && find . -type f ! -name '*.json' | sort)" ] || { echo "the file lists differ"; return 1; }
  differ=$(while read -r f; do cmp -s "$a/$f" "$b/$f" || echo "$f"; done <<<"$files")
  [ -z "$differ" ] || { echo "$(wc -l <<<"$differ") files differ: $(head -3 <<<"$differ" | tr '\n' ' ')"; return 1; }
  echo "$(wc -l <<<"$files") files ($(sed 's/.*\/[^.]*\.//' <<<"$files" | sort -u | tr '\n' ' ' | sed 's/ $//'))"
}

# engine_result NAME VALUE: a line of the final table beside the stage times.
engine_result() { _engine_results+=("$1|$2"); }

engine_table() {
  engine_stage ""
  local i total=0
  printf '\n| %-58s | %8s |\n|%s|%s|\n' "step" "seconds" "$(printf -- '-%.0s' $(seq 60))" "----------"
  for i in "${!_engine_stage_names[@]}"; do
    printf '| %-58s | %8s |\n' "${_engine_stage_names[$i]}" "${_engine_stage_secs[$i]:-?}"
    total=$((total + ${_engine_stage_secs[$i]:-0}))
  done
  printf '| %-58s | %8s |\n' "total" "$total"
  if [ ${#_engine_results[@]} -gt 0 ]; then
    printf '\n| %-40s | %-50s |\n|%s|%s|\n' "check" "result" "$(printf -- '-%.0s' $(seq 42))" "$(printf -- '-%.0s' $(seq 52))"
    for i in "${_engine_results[@]}"; do printf '| %-40s | %-50s |\n' "${i%%|*}" "${i#*|}"; done
  fi
}
