#!/usr/bin/env bash
# `dlscale collectives --memory device` on the GPUs of this machine: NCCL and MPI (CUDA-aware or
# staged) on device buffers, one rank a GPU (all of them under mpirun when there are several),
# every size checked exactly. Exit 77 (ctest: skipped, with the reason) when the build or the
# machine has no GPU; never a pass without a GPU.
# usage: gpu_test.sh MPIEXEC DLSCALE [mpiexec flags...]
set -euo pipefail
mpiexec=$1 dlscale=$2
shift 2
flags=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

set +e
"$dlscale" collectives --memory device -b 8 -e 8 --iters 1 --warmup 0 > "$tmp/probe.txt" 2>&1
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  if grep -q -e "no CUDA device" -e "no GPU collectives" "$tmp/probe.txt"; then
    echo "SKIPPED: $(cat "$tmp/probe.txt")"
    exit 77
  fi
  cat "$tmp/probe.txt"
  fail "the probe exited $rc"
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
ranks=$((gpus >= 2 ? gpus : 1))
timeout 300 "$mpiexec" -np "$ranks" "${flags[@]}" "$dlscale" collectives --memory device --algo all -b 8 -e 64M -f 8 \
  --iters 20 --warmup 5 --out "$tmp/r.jsonl" > "$tmp/out.txt" 2>&1 || { rc=$?; cat "$tmp/out.txt"; fail "sweep exited $rc"; }
cat "$tmp/out.txt"
# sizes 8 B .. 64 MiB by 8: 9 sizes x 2 algorithms, each checked exactly
n=$(grep -c '"benchmark":"allreduce"' "$tmp/r.jsonl")
[[ $n -eq 18 ]] || fail "expected 18 allreduce records (9 sizes x nccl, mpi), got $n"
[[ $(grep -c '"wrong":0' "$tmp/r.jsonl") -eq 18 ]] || fail "a record without a passed exact check"
grep -q '"memory":"device"' "$tmp/r.jsonl" || fail "memory not recorded"
grep -q '"mpi_path":"' "$tmp/r.jsonl" || fail "the MPI path (cuda-aware or host staging) not recorded"
grep -q '"nccl_version":' "$tmp/r.jsonl" || fail "NCCL version not recorded"
echo "GPU collectives: $ranks rank(s), all sizes exact"
