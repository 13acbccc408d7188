#!/usr/bin/env bash
# A sharded run on a real Slurm cluster, as users would submit it (root):
#   bash scripts/slurm-check.sh [BUILD_DIR]
# 1. A single-node cluster (scripts/slurm-cluster.sh start: slurm-wlm + munge, daemons of its own,
#    RequeueExit=3,4,143, cred_expire 10 s so that a requeued task waits 10 s, not 120).
# 2. A synthetic dataset (`depthmask synth`, DEPTHMASK_SLURM_FRAMES frames, default 800, of 160x120)
#    and one unsharded `depthmask run` of it: the reference.
# 3. examples/slurm/submit.sh: the array job (4 tasks, one CPU each, depthmask-array.sbatch:
#    `depthmask run --shard auto`) and the status job after it (afterany).
# 4. Faults, part way through a shard: task 1 killed (scancel --batch --signal=KILL: SIGKILL to the
#    batch step, which is depthmask itself (exec); no manifest saved) and requeued by hand (scontrol
#    requeue); task 2 sent SIGTERM (scancel --batch --signal=TERM: depthmask saves its manifest and
#    exits 143), which RequeueExit requeues by itself. (scancel --signal=KILL without --batch, or
#    with --full, cancels the job instead: SIGTERM first, then SIGKILL.)
# 5. Checks: every task ends COMPLETED with exit 0 (the two victims after a second attempt, appended
#    to their logs); the shards' outputs are byte-identical to the reference, file for file, with
#    no temporary or lock file left; one manifest per shard; the status job exits 0 and reports the
#    run complete.
# 6. A failing array (uneven task ids, refused by --shard auto: every task exits 2, which RequeueExit
#    leaves alone): the status job still runs (afterany) and exits 1.
# Prints the stage times and the checks last. Stops the cluster at the end unless it ran before.
set -Eeuo pipefail
trap 'echo "slurm-check: line $LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
[ "$(id -u)" -eq 0 ] || { echo "slurm-check: run as root (it installs packages and starts the Slurm daemons)" >&2; exit 1; }
. scripts/engine.sh

build=${1:-build-cpu}
frames=${DEPTHMASK_SLURM_FRAMES:-800}
size=160x120
shards=4
work=$(mktemp -d /tmp/slurm-check.XXXXXX)
logs=$repo/build-slurm
mkdir -p "$logs"
failures=0
fail() { echo "slurm-check: FAILED: $*" >&2; engine_result "$1" "FAILED"; failures=$((failures + 1)); }
cluster_was_up=0
bash scripts/slurm-cluster.sh status >/dev/null 2>&1 && cluster_was_up=1
cleanup() {
  if [ -n "${SLURM_CONF:-}" ]; then
    # Our jobs, if the check stopped early.
    for j in ${array:-} ${status_job:-} ${bad_array:-} ${bad_status:-}; do scancel "$j" 2>/dev/null || true; done
  fi
  [ "$cluster_was_up" = 1 ] || bash scripts/slurm-cluster.sh stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# `scontrol show job`'s KEY=value of one job (array tasks as JOBID_K).
job_field() { scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# Waits (at most $3 s) until job $1's state is one of $2 (a | list); prints the state.
wait_state() {
  local st=""
  for _ in $(seq $(($3 * 10))); do
    st=$(job_field "$1" JobState)
    [[ "|$2|" == *"|$st|"* ]] && { echo "$st"; return 0; }
    sleep 0.1
  done
  echo "${st:-unknown}"
  return 1
}
# The frames of shard K whose outputs are in the folder (the partition: frame i of the sorted
# listing is shard i % N; synth names frames by their position).
shard_done() {
  local k=$1 n=0 f
  for f in "$work/sharded"/*.tiff; do
    [ -e "$f" ] || continue
    f=${f##*/}
    [ $((10#${f%%.*} % shards)) -eq "$k" ] && n=$((n + 1))
  done
  echo "$n"
}
# Sends signal $2 to array task $1 once it runs and its shard has $3 frames' outputs; prints the count.
kill_part_way() {
  local task=$1 sig=$2 want=$3 opts=$4 k=${1##*_} done_now=0 st
  st=$(wait_state "$task" RUNNING 120) || { echo "task $task never ran ($st)" >&2; return 1; }
  for _ in $(seq 1200); do
    done_now=$(shard_done "$k")
    [ "$done_now" -ge "$want" ] && break
    sleep 0.05
  done
  # shellcheck disable=SC2086  # $opts: scancel's options, words on purpose
  scancel $opts --signal="$sig" "$task"
  echo "$done_now"
}

engine_stage "cluster (scripts/slurm-cluster.sh start)"
conf_line=$(bash scripts/slurm-cluster.sh start)  # "export SLURM_CONF=..."; a failed start stops the check here
eval "$conf_line"
engine_result "cluster" "$(sinfo -h -N -o '%N %T, %c CPUs' | head -1), Slurm $(sinfo -V | awk '{print $2}')"

engine_stage "dataset ($frames frames of $size), one unsharded run"
if [ ! -x "$build/depthmask" ]; then
  cmake -S . -B "$build" -G Ninja -C cmake/release-options.cmake -DDEPTHMASK_CUDA=OFF >/dev/null
  cmake --build "$build" --target depthmask >/dev/null
fi
bin=$(realpath "$build/depthmask")
"$bin" synth -o "$work/dataset" -n "$frames" -s "$size" >"$logs/synth.log"
# The run's configuration, as a user would write it for the cluster: absolute input, every format
# that tests a different writer.
cat >"$work/depthmask.yaml" <<EOF
input:
  root: $work/dataset
depth:
  max: 2
output:
  format: [tiff, npy]
  preview: true
EOF
"$bin" run --config "$work/depthmask.yaml" --output "$work/single" >"$logs/single.log" 2>&1 ||
  { tail -20 "$logs/single.log" >&2; echo "slurm-check: the reference run failed" >&2; exit 1; }
engine_result "reference: one unsharded run" "$(grep -m1 -o '[0-9]* frame(s): .* in [0-9.]* s' "$logs/single.log")"

engine_stage "examples/slurm/submit.sh: $shards tasks + status job"
mkdir -p "$work/jobs"
# One CPU per task: two tasks share the node's two cores at a time (the script's default is two).
ids=$(cd "$work/jobs" && DEPTHMASK=$bin bash "$repo/examples/slurm/submit.sh" "$work/depthmask.yaml" "$work/sharded" \
      "$shards" -- --cpus-per-task=1)
array=$(sed -n 1p <<<"$ids")
status_job=$(sed -n 2p <<<"$ids")
engine_result "jobs" "array $array (tasks 0-$((shards - 1))), status $status_job (afterany:$array)"
dep=$(job_field "$status_job" Dependency)
[[ "$dep" == afterany:"$array"_\** ]] || fail "the status job's dependency is '$dep', not afterany:${array}_*"

engine_stage "faults: task 1 SIGKILL + requeue, task 2 SIGTERM"
share=$((frames / shards))
want=$((share / 8))
if n1=$(kill_part_way "${array}_1" KILL "$want" --batch); then
  st=$(wait_state "${array}_1" "FAILED|CANCELLED|COMPLETED" 60) || true
  if [ "$st" = COMPLETED ]; then fail "task 1 finished before the kill arrived (set DEPTHMASK_SLURM_FRAMES higher)"
  else
    scontrol requeue "${array}_1"
    engine_result "task 1: SIGKILL part way" "$n1 of $share frames written, $st (exit $(job_field "${array}_1" ExitCode)); scontrol requeue"
  fi
else
  fail "task 1 was never killed"
fi
if n2=$(kill_part_way "${array}_2" TERM "$want" --batch); then
  # RequeueExit: no FAILED state in between, the task goes back to pending by itself.
  st=$(wait_state "${array}_2" "PENDING|REQUEUED|COMPLETED|FAILED" 60) || true
  code=$(job_field "${array}_2" ExitCode)
  if [ "$st" = PENDING ] && [ "$code" = 143:0 ]; then
    engine_result "task 2: SIGTERM part way" "$n2 of $share frames written, exit 143, requeued by RequeueExit"
  else
    fail "task 2 after SIGTERM: $st, exit $code (expected PENDING after exit 143)"
  fi
else
  fail "task 2 was never signalled"
fi

engine_stage "until every task and the status job end"
st=$(wait_state "$status_job" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 240) || fail "status job: still $st after 240 s"
squeue >"$logs/squeue-end.txt" 2>&1 || true
for k in $(seq 0 $((shards - 1))); do
  t=${array}_$k
  state=$(job_field "$t" JobState) code=$(job_field "$t" ExitCode) restarts=$(job_field "$t" Restarts)
  cp "$work/jobs/depthmask-${array}_$k.log" "$logs/" 2>/dev/null || true
  attempts=$(grep -c '^depthmask-array: job' "$work/jobs/depthmask-${array}_$k.log" 2>/dev/null || true)
  attempts=${attempts:-0}
  want_restarts=0
  [ "$k" = 1 ] || [ "$k" = 2 ] && want_restarts=1
  if [ "$state" = COMPLETED ] && [ "$code" = 0:0 ] && [ "$restarts" = "$want_restarts" ] && [ "$attempts" = $((want_restarts + 1)) ]; then
    # Each attempt's summary line: "N frame(s): A ok, F failed, S skipped[, D skipped (done)]".
    tries=$(sed -n 's/^depthmask: [0-9]* frame(s): \(.*\) in [0-9.]* s.*/\1/p' "$work/jobs/depthmask-${array}_$k.log" |
            sed 's/, 0 failed//; s/, 0 skipped//' | paste -sd'/' | sed 's|/| / |g')
    engine_result "task $k" "COMPLETED, exit 0; $attempts attempt(s): $tries"
  else
    tail -15 "$work/jobs/depthmask-${array}_$k.log" >&2 || true
    fail "task $k: $state, exit $code, restarts $restarts, $attempts attempt(s) logged (expected $((want_restarts + 1)))"
  fi
done

# afterany held the status job back until the last attempt of every task had ended.
ends=$(for k in $(seq 0 $((shards - 1))); do job_field "${array}_$k" EndTime; done | sort | tail -1)
started=$(job_field "$status_job" StartTime)
if [[ "$started" > "$ends" || "$started" == "$ends" ]]; then
  engine_result "status job started" "$started, after the last task's end ($ends)"
else
  fail "status job started at $started, before the last task ended ($ends)"
fi

engine_stage "outputs, manifests, status"
if res=$(engine_same_outputs "$work/single" "$work/sharded"); then
  engine_result "$shards shards vs one run" "byte-identical, $res"
else
  fail "$shards shards vs one run: $res"
fi
leftovers=$(cd "$work/sharded" && find . -type f \( -name '*.lock' -o -name '*.tmp*' -o -name '.*' \) | sort | head -5)
[ -z "$leftovers" ] && engine_result "temporaries and locks left" "none" || fail "left in the output folder: $(tr '\n' ' ' <<<"$leftovers")"
manifests=$(cd "$work/sharded" && ls depthmask-manifest.shard-*-of-$shards.json 2>/dev/null | wc -l)
[ "$manifests" = "$shards" ] && engine_result "per-shard manifests" "$shards (depthmask-manifest.shard-K-of-$shards.json)" ||
  fail "per-shard manifests: $manifests of $shards"
status_log=$work/jobs/depthmask-status-$status_job.log
cp "$status_log" "$logs/" 2>/dev/null || true
code=$(job_field "$status_job" ExitCode)
if [ "$st" = COMPLETED ] && [ "$code" = 0:0 ] && grep -q '^status: complete$' "$status_log"; then
  engine_result "status job (afterany)" "exit 0, $(grep -m1 '^total:' "$status_log" | cut -c1-44)"
else
  cat "$status_log" >&2 || true
  fail "status job: $st, exit $code"
fi

engine_stage "a failing array: the status job still reports"
# An array submitted with uneven task ids (--array=1,3 after submit.sh's own --array: sbatch takes the
# last) cannot be numbered 0..N-1: every task exits 2 at once, which RequeueExit leaves alone. afterany
# still starts the status job, which finds nothing done and exits 1.
mkdir -p "$work/jobs-bad"
ids=$(cd "$work/jobs-bad" && DEPTHMASK=$bin bash "$repo/examples/slurm/submit.sh" "$work/depthmask.yaml" "$work/bad-out" 2 \
      -- --array=1,3 --cpus-per-task=1)
bad_array=$(sed -n 1p <<<"$ids")
bad_status=$(sed -n 2p <<<"$ids")
st=$(wait_state "$bad_status" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 60) || true
codes=$(for k in 1 3; do echo "$(job_field "${bad_array}_$k" JobState)/$(job_field "${bad_array}_$k" ExitCode)"; done | paste -sd' ')
code=$(job_field "$bad_status" ExitCode)
if [ "$codes" = "FAILED/2:0 FAILED/2:0" ] && [ "$st" = FAILED ] && [ "$code" = 1:0 ] &&
   grep -q '^status: incomplete' "$work/jobs-bad/depthmask-status-$bad_status.log"; then
  engine_result "tasks failing (exit 2), not requeued" "$codes; the status job ran: exit 1, incomplete"
else
  tail -n 3 "$work/jobs-bad/"*.log >&2 || true
  fail "a failing array: tasks $codes, status job $st exit $code"
fi

engine_table
[ "$failures" -eq 0 ] || { echo "slurm-check: $failures check(s) failed (logs: $logs, cluster: $(dirname "$SLURM_CONF")/log)" >&2; exit 1; }
echo "slurm-check: all checks passed"
