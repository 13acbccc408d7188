#!/usr/bin/env bash
# The Kubernetes Indexed Job's container, run as its pods would run it, by a real Docker engine (root):
#   bash scripts/k8s-index-check.sh [IMAGE] [JOB_YAML]
# IMAGE: the project's x86_64 image (default depthmask:cuda13, which scripts/container-check.sh
# builds); JOB_YAML: default examples/kubernetes/depthmask-job.yaml.
# 1. Reads the Job (python3-yaml): the container's command, its DEPTHMASK_SHARD_COUNT, completions,
#    the pod's user, where it mounts the dataset, the output and the ConfigMap; the ConfigMap
#    (examples/kubernetes/config.yaml) is written to a folder mounted where the Job mounts it.
# 2. Runs the N indexes at once, as parallelism = N pods on one shared volume: `docker run
#    --network none` with JOB_COMPLETION_INDEX=K and DEPTHMASK_SHARD_COUNT=N, data/sample read-only at
#    the dataset's mountPath, one output folder (owned by the pod's user) at the output's.
# 3. Checks: every index exits 0 and leaves its manifest; the union of the shards' outputs is
#    byte-identical to one run of the same command without --shard in the same image; the status
#    Job's command (examples/kubernetes/depthmask-status-job.yaml) over the shards' folder exits 0.
# Prints one table last. Uses a running dockerd, or starts one as container-check.sh does.
set -Eeuo pipefail
trap 'echo "k8s-index-check: line $LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
[ "$(id -u)" -eq 0 ] || { echo "k8s-index-check: run as root (it may start dockerd)" >&2; exit 1; }
. scripts/engine.sh

image=${1:-depthmask:cuda13}
job=${2:-examples/kubernetes/depthmask-job.yaml}
status_job=examples/kubernetes/depthmask-status-job.yaml
configmap=examples/kubernetes/config.yaml
python=/usr/bin/python3
work=$(mktemp -d /tmp/k8s-index-check.XXXXXX)
failures=0
fail() { echo "k8s-index-check: FAILED: $*" >&2; engine_result "$1" "FAILED"; failures=$((failures + 1)); }
containers=()
cleanup() {
  [ ${#containers[@]} -eq 0 ] || $DOCKER rm -f "${containers[@]}" >/dev/null 2>&1 || true
  rm -rf "$work"
  engine_stop
}
trap cleanup EXIT

engine_stage "read the Job ($job)"
engine_apt python3-yaml
# The Job's facts as shell assignments (arrays quoted by Python's shlex), of these variables:
cmd=() status_cmd=() completions="" parallelism="" shard_count="" user="" data_mount="" out_mount="" config_mount=""
facts=$("$python" - "$job" "$status_job" "$configmap" "$work/config" <<'EOF'
import os, shlex, sys, yaml
job_file, status_file, cm_file, config_dir = sys.argv[1:]
job = yaml.safe_load(open(job_file))
spec = job["spec"]
pod = spec["template"]["spec"]
(c,) = [c for c in pod["containers"] if c["name"] == "depthmask"]
cmd = [str(x) for x in (c.get("command") or ["depthmask"]) + c.get("args", [])]
env = {e["name"]: e.get("value") for e in c.get("env", [])}
vols = {v["name"]: v for v in pod["volumes"]}
mounts = {}
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    kind = "configMap" if "configMap" in v else v.get("persistentVolumeClaim", {}).get("claimName", m["name"])
    mounts[kind] = m["mountPath"]
# The ConfigMap's files, as the kubelet would project them.
os.makedirs(config_dir)
for d in yaml.safe_load_all(open(cm_file)):
    if d and d["kind"] == "ConfigMap":
        for key, text in d["data"].items():
            with open(os.path.join(config_dir, key), "w") as f:
                f.write(text)
status = yaml.safe_load(open(status_file))["spec"]["template"]["spec"]["containers"][0]
status_cmd = [str(x) for x in (status.get("command") or ["depthmask"]) + status.get("args", [])]
sc = pod.get("securityContext", {})
q = shlex.quote
print(f"cmd=({' '.join(q(a) for a in cmd)})")
print(f"status_cmd=({' '.join(q(a) for a in status_cmd)})")
print(f"completions={int(spec['completions'])}")
print(f"parallelism={int(spec.get('parallelism', 1))}")
print(f"shard_count={q(str(env.get('DEPTHMASK_SHARD_COUNT', '')))}")
print(f"user={q(str(sc.get('runAsUser', '')) + (':' + str(sc['runAsGroup']) if 'runAsGroup' in sc else ''))}")
print(f"data_mount={q(mounts.get('depthmask-dataset', ''))}")
print(f"out_mount={q(mounts.get('depthmask-output', ''))}")
print(f"config_mount={q(mounts.get('configMap', ''))}")
EOF
)
eval "$facts"
n=$completions
echo "command: ${cmd[*]}; $n indexes (parallelism $parallelism), DEPTHMASK_SHARD_COUNT=$shard_count, user ${user:-of the image}"
[ "$shard_count" = "$n" ] || fail "DEPTHMASK_SHARD_COUNT ($shard_count) is not completions ($n)"
[ -n "$data_mount" ] && [ -n "$out_mount" ] && [ -n "$config_mount" ] ||
  { echo "k8s-index-check: the Job mounts dataset '$data_mount', output '$out_mount', config '$config_mount'" >&2; exit 1; }
# The command without its --shard option: the single run the shards must add up to.
single=()
skip=0
for a in "${cmd[@]}"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in --shard) skip=1 ;; --shard=*) ;; *) single+=("$a") ;; esac
done
engine_result "the Job's command" "$(printf '%q ' "${cmd[@]}" | sed 's/ $//')"

engine_stage "dockerd and the image ($image)"
engine_start
$DOCKER image inspect "$image" >/dev/null 2>&1 ||
  { echo "k8s-index-check: no image $image here: build it (bash scripts/container-check.sh, or docker build -f docker/Dockerfile -t $image .)" >&2; exit 1; }
# The pod's user (securityContext), else the image's own; the output folder is theirs (as fsGroup).
[ -n "$user" ] || user=$($DOCKER run --rm --network none --entrypoint id "$image" -u):$($DOCKER run --rm --network none --entrypoint id "$image" -g)
mkdir -p "$work/shards" "$work/single"
chown "$user" "$work/shards" "$work/single"
chmod 0755 "$work/config"
# volumes OUTPUT_DIR [ro]: the pod's three mounts, the output one read-only with "ro" (the status Job's).
volumes() { echo "-v $repo/data/sample:$data_mount:ro -v $1:$out_mount${2:+:$2} -v $work/config:$config_mount:ro"; }

engine_stage "the $n indexes at once (JOB_COMPLETION_INDEX=0..$((n - 1)))"
for k in $(seq 0 $((n - 1))); do
  name=dm-k8s-index-$k-$$
  # shellcheck disable=SC2046  # volumes() is words on purpose (paths without spaces: mktemp's, the checkout's)
  $DOCKER run -d --name "$name" --network none --user "$user" -e JOB_COMPLETION_INDEX="$k" \
    -e DEPTHMASK_SHARD_COUNT="$shard_count" $(volumes "$work/shards") \
    --entrypoint "${cmd[0]}" "$image" "${cmd[@]:1}" >/dev/null
  containers+=("$name")
done
codes=()
for k in $(seq 0 $((n - 1))); do
  name=dm-k8s-index-$k-$$
  rc=$($DOCKER wait "$name")
  codes+=("$k:$rc")
  $DOCKER logs "$name" >"$work/index-$k.log" 2>&1 || true
  if [ "$rc" != 0 ]; then
    tail -20 "$work/index-$k.log" >&2
    fail "index $k exited $rc"
  fi
done
engine_result "exit codes (index:code)" "${codes[*]}"
manifests=$(cd "$work/shards" && ls depthmask-manifest.shard-*-of-"$n".json 2>/dev/null | wc -l)
if [ "$manifests" = "$n" ]; then engine_result "per-shard manifests" "$n (depthmask-manifest.shard-K-of-$n.json)"
else fail "per-shard manifests: $manifests of $n (found: $(cd "$work/shards" && echo depthmask-manifest*))"
fi

engine_stage "one run without --shard, outputs against the shards' union"
# shellcheck disable=SC2046
$DOCKER run --rm --network none --user "$user" $(volumes "$work/single") --entrypoint "${single[0]}" "$image" \
  "${single[@]:1}" >"$work/single.log" 2>&1 || { tail -20 "$work/single.log" >&2; fail "the single run"; }
# Each index did its own part: the shards' manifests list disjoint sets of frames, none empty, which
# add up to the single run's (a shard that ignored JOB_COMPLETION_INDEX would list them all).
if res=$("$python" - "$work/shards" "$work/single/depthmask-manifest.json" "$n" 2>&1 <<'EOF'
import json, os, sys
shards_dir, single_file, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
single = set(json.load(open(single_file))["frames"])
seen, sizes = set(), []
for k in range(n):
    frames = set(json.load(open(os.path.join(shards_dir, f"depthmask-manifest.shard-{k}-of-{n}.json")))["frames"])
    if not frames or frames & seen:
        sys.exit(f"shard {k}: {len(frames)} frame(s), {len(frames & seen)} also in an earlier shard")
    seen |= frames
    sizes.append(str(len(frames)))
if seen != single:
    sys.exit(f"the shards list {len(seen)} frame(s), the single run {len(single)}")
print(f"disjoint, {'+'.join(sizes)} = {len(single)} frames")
EOF
); then engine_result "frames per shard (manifests)" "$res"
else fail "frames per shard (manifests): $res"
fi
# Only the frame outputs: the manifests (.json) differ by name and content, and each shard's lock
# file is not an output.
if res=$(engine_same_outputs "$work/single" "$work/shards"); then
  engine_result "union of $n shards vs one run" "byte-identical, $res"
else
  (cd "$work/shards" && find . -type f | sort | head -20) >&2
  fail "union of $n shards vs one run: $res"
fi

engine_stage "the status Job's command over the shards' folder"
set +e
# shellcheck disable=SC2046
$DOCKER run --rm --network none --user "$user" $(volumes "$work/shards" ro) --entrypoint "${status_cmd[0]}" "$image" \
  "${status_cmd[@]:1}" >"$work/status.log" 2>&1
rc=$?
set -e
if [ "$rc" = 0 ] && grep -q '^status: complete' "$work/status.log"; then
  engine_result "status Job's command (output read-only)" "exit 0, $(grep -m1 '^total:' "$work/status.log" | cut -c1-44)"
else cat "$work/status.log" >&2; fail "status exited $rc"
fi

engine_table
[ "$failures" -eq 0 ] || { echo "k8s-index-check: $failures check(s) failed" >&2; exit 1; }
echo "k8s-index-check: all checks passed"
