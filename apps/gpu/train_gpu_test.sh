#!/usr/bin/env bash
# `dlscale train --backend cudnn` end to end on this machine's GPUs: one process, then ssgd
# under mpirun (host-staged gradients at 2 ranks on any GPU count; NCCL at one rank a GPU when
# there are several). Each run must end "ok" with the device in its record. Exit 77 (ctest:
# skipped, with the reason) when the build or the machine has no GPU; never a pass without one.
# usage: train_gpu_test.sh MPIEXEC DLSCALE [mpiexec flags...]
set -euo pipefail
mpiexec=$1 dlscale=$2
shift 2
flags=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
train=(train -m cifar10_quick -b 16 --image 16 --data synthetic:320 --epochs 1 --quiet)

set +e
"$dlscale" "${train[@]}" --backend cudnn --out "$tmp/one.jsonl" > "$tmp/one.txt" 2>&1
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  if grep -q -e "no CUDA device" -e "built without CUDA" "$tmp/one.txt"; then
    echo "SKIPPED: $(cat "$tmp/one.txt")"
    exit 77
  fi
  cat "$tmp/one.txt"
  fail "one process exited $rc"
fi
cat "$tmp/one.txt"
grep -q '"status":"ok"' "$tmp/one.jsonl" || fail "the one-process run is not ok"
grep -q '"device":"cuda:' "$tmp/one.jsonl" || fail "the device is not in the record"

timeout 300 "$mpiexec" -np 2 "${flags[@]}" "$dlscale" "${train[@]}" --backend cudnn --scheme ssgd --allreduce ring \
  --out "$tmp/staged.jsonl" > "$tmp/staged.txt" 2>&1 || { rc=$?; cat "$tmp/staged.txt"; fail "staged ssgd exited $rc"; }
grep -q '"gradient_path":"host staging"' "$tmp/staged.jsonl" || fail "the staged run does not say so"
grep -q '"status":"ok"' "$tmp/staged.jsonl" || fail "the staged ssgd run is not ok"

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [[ $gpus -ge 2 ]]; then
  timeout 300 "$mpiexec" -np "$gpus" "${flags[@]}" "$dlscale" "${train[@]}" --backend cudnn --scheme ssgd --allreduce nccl \
    --out "$tmp/nccl.jsonl" > "$tmp/nccl.txt" 2>&1 || { rc=$?; cat "$tmp/nccl.txt"; fail "NCCL ssgd exited $rc"; }
  grep -q '"allreduce":"nccl"' "$tmp/nccl.jsonl" || fail "the NCCL run does not say so"
  echo "GPU training: one process, staged ssgd at 2 ranks, NCCL ssgd at $gpus ranks"
else
  echo "GPU training: one process, staged ssgd at 2 ranks (one GPU: NCCL ssgd needs two)"
fi
