#!/usr/bin/env bash
# A single-node Slurm cluster of the project's own (root), for CI (scripts/slurm-check.sh) and for
# trying examples/slurm/ on one machine:
#   bash scripts/slurm-cluster.sh start    # installs slurm-wlm + munge if missing, starts the daemons,
#                                          # waits for the node to be idle; prints the SLURM_CONF line
#   eval "$(bash scripts/slurm-cluster.sh env)"   # then sinfo, sbatch, squeue ... talk to it
#   bash scripts/slurm-cluster.sh stop     # cancels its jobs, stops the daemons it started
#   bash scripts/slurm-cluster.sh status   # the daemons, sinfo; exit 0 when all run
# Everything lives in one folder, DEPTHMASK_SLURM_DIR (default /run/depthmask-slurm): slurm.conf, a
# munge key of its own (created if absent), munged's socket, the controller's state, slurmd's spool,
# pid files and logs (log/). Nothing in /etc is written and a system munged or Slurm is left alone: the
# daemons and the clients find this cluster through SLURM_CONF and the socket named in its AuthInfo.
#
# No systemd and no cgroup hierarchy to rely on (CI runs in containers and sandboxes): processes are
# tracked by their parent ids (proctrack/linuxproc), tasks are not bound (task/none), no accounting.
# SlurmUser=root: the daemons run as root, as this script does. Jobs submitted as root run as root.
# RequeueExit=3,4,143: depthmask's retryable exit codes requeue a task by themselves (docs/SCALE.md).
# A start clears the controller's previous state (slurmctld -c): jobs of an earlier cluster are gone;
# a cluster already running with the same slurm.conf is kept, one with another is restarted.
#
# Settings (environment): DEPTHMASK_SLURM_DIR; DEPTHMASK_SLURM_PORT (slurmctld's port, default 6817;
# slurmd takes the next one); DEPTHMASK_SLURM_CRED_EXPIRE (seconds, default 10; Slurm's default is
# 120, its minimum 5): a requeued job waits this long before it may start again, so a short value
# keeps a requeue test short.
set -Eeuo pipefail
trap 'echo "slurm-cluster: line $LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/engine.sh"

dir=${DEPTHMASK_SLURM_DIR:-/run/depthmask-slurm}
port=${DEPTHMASK_SLURM_PORT:-6817}
cred_expire=${DEPTHMASK_SLURM_CRED_EXPIRE:-10}
conf=$dir/slurm.conf
node=$(hostname -s)
munge_socket=$dir/munge/munge.socket

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

alive() { local pid; pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

export_conf() { export SLURM_CONF=$conf; }

# The node's state as sinfo prints it (idle, mixed, allocated, down*, ...), or nothing.
node_state() { SLURM_CONF=$conf sinfo -h -N -n "$node" -o '%T' 2>/dev/null | head -1 || true; }

# write_conf FILE: the configuration of this cluster.
write_conf() {
  local cpus
  cpus=$(nproc)
  mkdir -p "$dir"/{ctld,slurmd,log}
  cat >"$1" <<EOF
# Written by scripts/slurm-cluster.sh: a single-node cluster on $node (no systemd, no cgroups).
ClusterName=depthmask
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
# Our own munged's socket; cred_expire: how long a requeued job waits before it may start again.
AuthInfo=socket=$munge_socket,cred_expire=$cred_expire
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/slurmd
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
# depthmask's retryable exit codes (docs/SCALE.md): platform, resource, SIGTERM (manifest saved).
# Such a task goes back to pending and runs again (at most MaxBatchRequeue times, default 5).
RequeueExit=3,4,143
SchedulerType=sched/backfill
# A requeued job becomes eligible cred_expire seconds later, and only a scheduling pass starts it:
# passes every 5 s instead of 60 (main loop) and 30 (backfill).
SchedulerParameters=sched_interval=5,bf_interval=5
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# A node that went down (slurmd restarted) comes back by itself once it registers.
ReturnToService=2
# Short timers: a one-machine cluster for tests, not a production one.
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

start_munge() {
  if alive "$dir/munge/munged.pid" && [ -S "$munge_socket" ]; then return 0; fi
  # munged checks permissions: its folders writable by root only, the key readable by root only.
  mkdir -p "$dir/munge"
  chmod 0755 "$dir" "$dir/munge"
  if [ ! -s "$dir/munge/munge.key" ]; then
    engine_log "creating a munge key ($dir/munge/munge.key)"
    mungekey --create --keyfile="$dir/munge/munge.key"
  fi
  chmod 0600 "$dir/munge/munge.key"
  munged --socket="$munge_socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
  for _ in $(seq 20); do [ -S "$munge_socket" ] && return 0; sleep 0.5; done
  echo "slurm-cluster: munged did not create its socket; its log:" >&2
  tail -20 "$dir/log/munged.log" >&2
  return 1
}

start() {
  [ "$(id -u)" -eq 0 ] || { echo "slurm-cluster: run as root (it installs packages and starts daemons)" >&2; exit 1; }
  engine_apt slurm-wlm munge
  mkdir -p "$dir"
  write_conf "$conf.new"
  # A cluster already running with this very configuration is used as it is; one with another
  # configuration (an older version of this script, other settings) is restarted with the new one.
  if alive "$dir/slurmctld.pid" && alive "$dir/slurmd.pid" && [ -n "$(node_state)" ] && cmp -s "$conf" "$conf.new"; then
    rm -f "$conf.new"
    engine_log "the cluster in $dir is running already: $(node_state)"
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  # Anything started before goes first (a daemon without its partners, an older configuration).
  [ -f "$conf" ] && stop >&2
  mv "$conf.new" "$conf"
  export_conf
  start_munge
  engine_log "starting slurmctld and slurmd (config $conf, logs $dir/log)"
  slurmctld -c -f "$conf"
  slurmd -f "$conf"
  local state=""
  for _ in $(seq 60); do
    state=$(node_state)
    case "$state" in idle) break ;; esac
    sleep 1
  done
  if [ "$state" != idle ]; then
    echo "slurm-cluster: the node $node is '${state:-not listed}' after 60 s; the logs:" >&2
    tail -15 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    exit 1
  fi
  engine_log "cluster up: node $node idle, $(nproc) CPUs, partition debug"
  echo "export SLURM_CONF=$conf"
}

# SIGTERM to the daemons of the pid files at once, then waits for them (at most 15 s, then SIGKILL).
stop_pids() {
  local file pid pids=()
  for file in "$@"; do
    pid=$(cat "$file" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" && pids+=("$pid"); fi
    rm -f "$file"
  done
  for _ in $(seq 30); do
    local left=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
    [ ${#left[@]} -eq 0 ] && return 0
    pids=("${left[@]}")
    sleep 0.5
  done
  engine_log "${pids[*]} did not stop on SIGTERM: SIGKILL"
  kill -9 "${pids[@]}" 2>/dev/null || true
}

# The Slurm daemons first (they talk to munged while they stop), then munged.
stop_daemons() {
  stop_pids "$dir/slurmd.pid" "$dir/slurmctld.pid"
  stop_pids "$dir/munge/munged.pid"
}

stop() {
  if alive "$dir/slurmctld.pid"; then
    export_conf
    # The cluster's jobs end first, so that no slurmstepd (and no job's process) outlives slurmd.
    if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
      engine_log "cancelling the cluster's jobs"
      squeue -h -o %A | sort -u | xargs -r scancel --quiet 2>/dev/null || true
      for _ in $(seq 30); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.5; done
    fi
  fi
  stop_daemons
  engine_log "cluster in $dir stopped (logs kept in $dir/log)"
}

# Exit 0 when all three daemons run.
status() {
  local d rc=0
  for d in munge/munged slurmctld slurmd; do
    if alive "$dir/$d.pid"; then echo "${d#munge/}: running ($(cat "$dir/$d.pid"))"; else echo "${d#munge/}: not running"; rc=1; fi
  done
  if alive "$dir/slurmctld.pid"; then SLURM_CONF=$conf sinfo || rc=1; fi
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status || exit 1 ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) usage ;;
esac
