#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests (shared/notes/machines.md says what
# it takes): munged (started as the munge user if it is not running), slurmctld and slurmd on
# their own ports with their own state folder under DIR, configured by DIR/slurm.conf (use it
# with SLURM_CONF=DIR/slurm.conf). Root only.
#   slurm_cluster.sh start DIR    start, wait until the node is idle (60 s at most)
#   slurm_cluster.sh stop DIR     stop what start started
set -euo pipefail
cmd=$1 dir=$2
[[ $(id -u) -eq 0 ]] || { echo "slurm_cluster: needs root"; exit 2; }
export SLURM_CONF="$dir/slurm.conf"
alive() {  # the daemons of DIR still running, by their pid files
  local d p
  for d in slurmd slurmctld; do
    [[ -f "$dir/$d.pid" ]] || continue
    p=$(cat "$dir/$d.pid")
    if kill -0 "$p" 2> /dev/null; then echo "$p"; fi
  done
}
if [[ $cmd == stop ]]; then  # SIGTERM, SIGKILL after 10 s; exit 1 if one is still there
  for p in $(alive); do kill "$p"; done
  for _ in $(seq 100); do [[ -z $(alive) ]] && exit 0; sleep 0.1; done
  for p in $(alive); do kill -9 "$p"; done
  sleep 1
  [[ -z $(alive) ]] || { echo "slurm_cluster: daemons $(alive) did not stop"; exit 1; }
  exit 0
fi
mkdir -p "$dir/spool/ctld" "$dir/spool/d" "$dir/log"
host=$(hostname -s)
cpus=$(getconf _NPROCESSORS_ONLN)  # not nproc: it follows OMP_NUM_THREADS
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$dir/slurm.conf" <<CONF
ClusterName=dlstest
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
ReturnToService=2
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
cat > "$dir/cgroup.conf" <<CONF
CgroupPlugin=autodetect
IgnoreSystemd=yes
CONF
if ! pgrep -x munged > /dev/null; then
  mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
  [[ -s /etc/munge/munge.key ]] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; }
  chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
  chmod 0700 /etc/munge /var/log/munge /var/lib/munge
  chmod 0400 /etc/munge/munge.key
  chmod 0755 /run/munge
  su -s /bin/sh munge -c /usr/sbin/munged
fi
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 120); do
  if [[ "$(sinfo -h -o '%t' 2>/dev/null)" == idle ]]; then exit 0; fi
  sleep 0.5
done
echo "slurm_cluster: the node did not become idle; sinfo says: $(sinfo 2>&1)"
for log in "$dir/log/slurmctld.log" "$dir/log/slurmd.log"; do
  if [[ -f $log ]]; then tail -n 20 "$log"; fi
done
exit 1
