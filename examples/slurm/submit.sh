#!/usr/bin/env bash
# Queues a sharded run and its status job:
#   examples/slurm/submit.sh CONFIG.yaml OUTPUT_DIR [SHARDS] [-- SBATCH_OPTION...]
#   examples/slurm/submit.sh scene.yaml /shared/out/scene 16 -- --gres=gpu:1 --time=02:00:00
# SHARDS (default 4) array tasks run depthmask-array.sbatch; one job runs depthmask-status.sbatch
# after all of them have ended (afterany). Options after -- go to the array job only (the status job
# needs no GPU); sbatch's own variables (SBATCH_PARTITION, SBATCH_ACCOUNT, ...) reach both. Logs are
# written to the folder submit.sh is run from. Prints the two job ids, one per line (array, status).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ $# -lt 2 ]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
# Absolute paths: the jobs may start in another folder, on another node.
config=$(realpath "$1")
output=$(realpath -m "$2")
shift 2
shards=4
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  shards=$1
  shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: SHARDS must be a positive number, not '$shards'" >&2; exit 2; }
[ -f "$config" ] || { echo "submit.sh: no configuration file $config" >&2; exit 2; }

# --parsable prints "JOBID" or "JOBID;CLUSTER".
array=$(sbatch --parsable --array="0-$((shards - 1))" "$@" "$here/depthmask-array.sbatch" "$config" "$output")
array=${array%%;*}
status=$(sbatch --parsable --dependency="afterany:$array" "$here/depthmask-status.sbatch" "$config" "$output")
status=${status%%;*}
echo "submit.sh: array job $array ($shards tasks), status job $status (after all of them); output $output" >&2
echo "$array"
echo "$status"
