#!/usr/bin/env bash
# A real Slurm (issue 6): a one-node cluster started here (slurm_cluster.sh), a small plan run
# through srun by `dlscale run`, the same plan through mpirun, and a generated sbatch script
# submitted with sbatch --wait. The records of both paths have the same shape, and the training
# records carry every rank's placement. The cluster is stopped at the end, pass or fail.
# usage: slurm_test.sh DLSCALE
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/test_skip.sh"
[[ $(id -u) -eq 0 ]] || skip_or_fail "root for Slurm" DLS_REQUIRE_SLURM "the test needs root to start the Slurm daemons (CI runs as root)"
dlscale=$(readlink -f "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
cleanup() {  # pass or fail, the daemons stop; a daemon that does not is a failure
  local rc=$?
  "$here/slurm_cluster.sh" stop "$tmp/slurm" || { echo "FAIL: the Slurm daemons did not stop"; rc=1; }
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export DLSCALE_ROOT=$root OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$here/slurm_cluster.sh" start "$tmp/slurm" || fail "the Slurm cluster did not start"
export SLURM_CONF=$tmp/slurm/slurm.conf
cat > "$tmp/site.yaml" <<SITE
name: slurm_localhost
description: "this machine as a one-node Slurm cluster (tests)"
node: {cores: auto}
launcher: {kind: srun, ranks_per_node: 2, threads_per_rank: 1, bind: none, oversubscribe: true}
scheduler: {kind: slurm, partition: debug, time_limit: "00:10:00"}
environment: {OMPI_ALLOW_RUN_AS_ROOT: "1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: "1"}
papi_events: [PAPI_TOT_CYC, PAPI_TOT_INS]  # as localhost's: the two runs' records match in shape
dlscale: $dlscale
SITE
cat > "$tmp/plan.yaml" <<'PLAN'
name: slurm_small
experiments:
  - name: allreduce
    kind: collectives
    # few iterations: 2 busy-polling ranks on a loaded 2-core machine take ms per call
    args: {minbytes: "8", maxbytes: "64K", stepfactor: "16", algo: "mpi,ring", iters: "50", warmup: "5"}
    sweep: {ranks_per_node: [2]}
    time_limit: 40
  - name: train
    kind: train
    args: {model: cifar10_quick, data: "synthetic:256", image: "16", steps: "10", eval-every: "-1", scheme: ssgd, holdout: "0"}
    sweep: {ranks_per_node: [2], batch: [8]}
    time_limit: 40
PLAN
"$dlscale" run --site "$tmp/site.yaml" --plan "$tmp/plan.yaml" --campaign "$tmp/srun" --no-progress > "$tmp/srun.txt" 2>&1 \
  || { cat "$tmp/srun.txt"; cat "$tmp"/srun/parts/*.err 2>/dev/null | tail -20; tail -n 30 "$tmp/slurm/log/slurmctld.log"; fail "the plan through srun"; }
"$dlscale" run --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/mpirun" --no-progress > "$tmp/mpirun.txt" 2>&1 \
  || { cat "$tmp/mpirun.txt"; fail "the plan through mpirun"; }
# the sbatch path: the train point's script from --dry-run, submitted and waited for
"$dlscale" run --site "$tmp/site.yaml" --plan "$tmp/plan.yaml" --campaign "$tmp/sbatch" --dry-run > "$tmp/dry.txt"
awk '/^# point .*\(train /{p=1} p && /^#!\/bin\/bash/{s=1} s{print} s && /^srun /{exit}' "$tmp/dry.txt" > "$tmp/job.sh"
grep -q '^#SBATCH --ntasks-per-node=2' "$tmp/job.sh" || { cat "$tmp/job.sh"; fail "no sbatch script for the train point"; }
mkdir -p "$tmp/sbatch/parts"
(cd "$tmp" && sbatch --wait --chdir="$tmp" job.sh > "$tmp/sbatch.txt" 2>&1) || { cat "$tmp/sbatch.txt" "$tmp"/dlscale-train-*.out; fail "sbatch --wait"; }
python3 - "$tmp" <<'PY' || fail "records"
import json, sys, glob
tmp = sys.argv[1]
def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]
srun, mpirun = load(f"{tmp}/srun/records.jsonl"), load(f"{tmp}/mpirun/records.jsonl")
sb = [r for f in glob.glob(f"{tmp}/sbatch/parts/*.jsonl") for r in load(f)]
def shape(recs):
    return {(r["kind"], r["benchmark"]): sorted(k for k in r["metrics"] if k != "placement") for r in recs}
assert shape(srun) == shape(mpirun), (shape(srun), shape(mpirun))
assert len(srun) == len(mpirun) and all(r["status"] == "ok" for r in srun + sb), [r["status"] for r in srun + sb]
for recs, how in ((srun, "srun"), (sb, "sbatch")):
    train = [r for r in recs if r["kind"] == "train"]
    assert len(train) == 1, how
    pl = train[0]["metrics"]["placement"]
    assert [p["rank"] for p in pl] == [0, 1] and all(p["host"] for p in pl), (how, pl)
    assert train[0]["metrics"]["ranks"] == 2, how
print("slurm: srun and sbatch records match the mpirun path's shape; placement of 2 ranks recorded")
PY
echo "slurm: ok"
