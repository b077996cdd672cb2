#!/usr/bin/env bash
# `dlscale collectives --memory device` on the GPUs of this machine: NCCL and MPI (CUDA-aware or
# staged) on device buffers, one rank a GPU (all of them under mpirun when there are several),
# every size checked exactly; on a machine of one GPU, NCCL also at 2 ranks sharing it
# (DLS_NCCL_SHARE_GPU=1: each rank a host of its own to NCCL). Exit 77 (ctest: skipped, with the reason) when the build or the
# machine has no GPU; never a pass without a GPU.
# usage: gpu_test.sh MPIEXEC DLSCALE [mpiexec flags...]
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/mpi_test_lib.sh" "$@" || exit 1  # mpiexec, dlscale, flags, $tmp, fail, gpu_probe

gpu_probe probe "$dlscale" collectives --memory device -b 8 -e 8 --iters 1 --warmup 0
gpus=1  # the probe found one; nvidia-smi counts them where it is installed
if command -v nvidia-smi > /dev/null; then gpus=$(nvidia-smi -L | awk '/^GPU/ {n++} END {print n + 0}'); fi
ranks=$((gpus >= 2 ? gpus : 1))
timeout 300 "$mpiexec" -np "$ranks" "${flags[@]}" "$dlscale" collectives --memory device --algo all -b 8 -e 16M -f 8 \
  --iters 20 --warmup 5 --out "$tmp/r.jsonl" > "$tmp/out.txt" 2>&1 || { rc=$?; cat "$tmp/out.txt"; fail "sweep exited $rc"; }
cat "$tmp/out.txt"
# sizes 8 B .. 16 MiB by 8: 8 sizes x 2 algorithms, each checked exactly
n=$(grep -c '"benchmark":"allreduce"' "$tmp/r.jsonl")
[[ $n -eq 16 ]] || fail "expected 16 allreduce records (8 sizes x nccl, mpi), got $n"
[[ $(grep -c '"wrong":0' "$tmp/r.jsonl") -eq 16 ]] || fail "a record without a passed exact check"
grep -q '"memory":"device"' "$tmp/r.jsonl" || fail "memory not recorded"
grep -q '"mpi_path":"' "$tmp/r.jsonl" || fail "the MPI path (cuda-aware or host staging) not recorded"
grep -q '"nccl_version":' "$tmp/r.jsonl" || fail "NCCL version not recorded"
if [[ $gpus -eq 1 ]]; then
  DLS_NCCL_SHARE_GPU=1 timeout 300 "$mpiexec" -np 2 "${flags[@]}" "$dlscale" collectives --memory device --algo nccl \
    -b 8 -e 16M -f 8 --iters 5 --warmup 1 --out "$tmp/shared.jsonl" > "$tmp/shared.txt" 2>&1 \
    || { rc=$?; cat "$tmp/shared.txt"; fail "NCCL at 2 ranks on one GPU exited $rc"; }
  [[ $(grep -c '"wrong":0' "$tmp/shared.jsonl") -eq 8 ]] || fail "NCCL sharing a GPU: not 8 sizes checked exact"
  grep -q '"nccl_shared_gpu":true' "$tmp/shared.jsonl" || fail "the records do not say the GPU was shared"
  echo "GPU collectives: NCCL at 2 ranks sharing the GPU, all sizes exact"
fi
echo "GPU collectives: $ranks rank(s), all sizes exact"
