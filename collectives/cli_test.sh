#!/usr/bin/env bash
# `dlscale collectives` as a user meets it, under mpirun at 3 ranks: a small checked sweep that
# writes valid records, and bad input that fails on every rank with one clear message, exit 2,
# no record and no hang (each run is bounded by `timeout`). Few iterations: with 3 ranks on 2
# cores beside other tests, the default 1000 of a small size took over the 60 s bound.
# usage: cli_test.sh MPIEXEC DLSCALE [mpiexec flags...]
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/mpi_test_lib.sh" "$@" || exit 1  # mpiexec, dlscale, flags, $tmp, fail, gpu_probe
run3() { timeout 60 "$mpiexec" -np 3 "${flags[@]}" "$dlscale" collectives "$@"; }

# a checked sweep: exit 0, one record per (algorithm, size) plus one fit per algorithm
run3 -b 0 -e 64K -f 16 --algo all --iters 50 --warmup 5 --out "$tmp/r.jsonl" > "$tmp/out.txt" 2>&1 || { rc=$?; cat "$tmp/out.txt"; fail "sweep exited $rc"; }
n=$(grep -c '"benchmark":"allreduce"' "$tmp/r.jsonl")
# sizes 0 1 16 256 4K 64K bytes; 0 and 1 byte are both 0 floats: 5 sizes x 6 algorithms
[[ $n -eq 30 ]] || fail "expected 30 allreduce records (5 sizes x 6 algos), got $n"
f=$(grep -c '"benchmark":"allreduce_alpha_beta_fit"' "$tmp/r.jsonl")
[[ $f -eq 6 ]] || fail "expected 6 fit records, got $f"
# shm's records carry what shapes it (the defaults here)
# (and the path that ran: the FIFO ring below 64 KiB on one node; none at 0 bytes)
[[ $(grep -c '"shm":{"chunk_bytes":131072,"copy":"auto","copy_path":"fifo","node_ranks":0,"slots":4}' "$tmp/r.jsonl") -ge 3 ]] || fail "shm records without their settings and path (fifo below 64 KiB)"
[[ $(grep -c '"shm":{"chunk_bytes":131072,"copy":"auto","node_ranks":0,"slots":4}' "$tmp/r.jsonl") -eq 1 ]] || fail "shm's 0-byte record: a path, or not one record"
# cross-memory attach, asked for: checked, and recorded as the path that ran
# (where the kernel forbids it: refused with the reason, exit 2, no record)
# and auto's path at 64 KiB in the sweep above: cma from there on one node where it is allowed
auto64k='"shm":{"chunk_bytes":131072,"copy":"auto","copy_path":"PATH","node_ranks":0,"slots":4}'
if run3 -b 4M -e 8M --algo shm --shm-copy cma --shm-chunk 64K --iters 3 --warmup 1 --out "$tmp/cma.jsonl" > "$tmp/cma.txt" 2>&1; then
  [[ $(grep '"wrong":0' "$tmp/cma.jsonl" | grep -c '"copy":"cma","copy_path":"cma","node_ranks":0') -eq 2 ]] || fail "shm through cma: not 2 checked sizes recorded as cma"
  [[ $(grep '"bytes":65536,' "$tmp/r.jsonl" | grep -c "${auto64k/PATH/cma}") -eq 1 ]] || fail "auto at 64 KiB on one node: not cma"
else
  rc=$?
  grep -q "cross-memory attach refused" "$tmp/cma.txt" && [[ $rc -eq 2 && ! -s "$tmp/cma.jsonl" ]] || { cat "$tmp/cma.txt"; fail "shm through cma exited $rc"; }
  echo "cma refused here: $(grep -m1 'refused' "$tmp/cma.txt")"
  [[ $(grep '"bytes":65536,' "$tmp/r.jsonl" | grep -c "${auto64k/PATH/fifo}") -eq 1 ]] || fail "auto at 64 KiB where cma is refused: not fifo"
fi

# shm on emulated nodes of 2 ranks: 3 ranks make nodes of 2 and 1, which "all" leaves out with
# the reason (and --algo shm refuses, below); at --shm-node-ranks 3, one node, it runs and checks
run3 -b 4K -e 64K -f 16 --algo all --shm-node-ranks 2 --iters 20 --warmup 2 --out "$tmp/n.jsonl" > "$tmp/n.txt" 2>&1 || { rc=$?; cat "$tmp/n.txt"; fail "sweep on uneven nodes exited $rc"; }
grep -q "# shm left out: its nodes hold 1 to 2 ranks" "$tmp/n.txt" || { cat "$tmp/n.txt"; fail "shm left out without its reason"; }
! grep -q '"algo":"shm"' "$tmp/n.jsonl" || fail "shm measured on uneven nodes"
run3 -b 4K -e 1M -f 16 --algo shm --shm-node-ranks 3 --shm-chunk 4K --shm-slots 2 --iters 20 --warmup 2 --out "$tmp/s.jsonl" > "$tmp/s.txt" 2>&1 || { rc=$?; cat "$tmp/s.txt"; fail "shm with 4K chunks exited $rc"; }
[[ $(grep -c '"wrong":0' "$tmp/s.jsonl") -eq 3 ]] || fail "shm with 4K chunks: not 3 checked sizes"
# the overlap sweep's thread engine runs shm with the same settings, and records them
run3 -b 64K -e 64K --overlap thread --algo shm --shm-chunk 4K --iters 20 --warmup 2 --out "$tmp/so.jsonl" > "$tmp/so.txt" 2>&1 || { rc=$?; cat "$tmp/so.txt"; fail "overlap sweep of shm exited $rc"; }
grep -q '"shm":{"chunk_bytes":4096,"copy":"auto","node_ranks":0,"slots":4}' "$tmp/so.jsonl" || fail "the overlap record of shm without its settings"
# the vector in the node's shared memory: every algorithm checked on it, recorded as such
run3 -b 4K -e 1M -f 16 --algo all --memory shared --iters 20 --warmup 2 --out "$tmp/m.jsonl" > "$tmp/m.txt" 2>&1 || { rc=$?; cat "$tmp/m.txt"; fail "sweep on shared memory exited $rc"; }
[[ $(grep -c '"wrong":0' "$tmp/m.jsonl") -eq 18 ]] || fail "shared memory: not 6 algorithms x 3 checked sizes"
[[ $(grep -c '"memory":"shared"' "$tmp/m.jsonl") -eq 24 ]] || fail "shared memory: a record (18 points, 6 fits) without memory shared"
grep -q '"wrong":0' "$tmp/r.jsonl" || fail "no exact check in the records"
! grep -q '"status":"failed"' "$tmp/r.jsonl" || fail "a failed record"
grep -q '"ranks":3' "$tmp/r.jsonl" || fail "ranks not recorded"

# the overlap sweep: both engines, checked, one record per (engine, algorithm, size)
run3 -b 1K -e 64K -f 64 --overlap all --algo mpi,ring --iters 50 --warmup 5 --out "$tmp/o.jsonl" > "$tmp/o.txt" 2>&1 || { rc=$?; cat "$tmp/o.txt"; fail "overlap sweep exited $rc"; }
n=$(grep -c '"benchmark":"allreduce_overlap"' "$tmp/o.jsonl")
[[ $n -eq 6 ]] || fail "expected 6 overlap records (2 sizes x (2 thread algos + nonblocking)), got $n"
[[ $(grep -c '"wrong":0' "$tmp/o.jsonl") -eq 6 ]] || fail "an overlap record without a passed exact check"
grep -q '"overlap_fraction":' "$tmp/o.jsonl" || fail "no overlap fraction recorded"

# --counters: each point's timed calls counted on every thread of rank 0; perf::TASK-CLOCK over
# them is between 0 and the cores the rank can use, and a run without --counters counts nothing
run3 -b 4K -e 64K -f 16 --algo ring --iters 50 --warmup 5 --counters software --out "$tmp/c.jsonl" > "$tmp/c.txt" 2>&1 || { rc=$?; cat "$tmp/c.txt"; fail "counted sweep exited $rc"; }
python3 - "$tmp/c.jsonl" "$tmp/r.jsonl" <<'PY' || fail "counters in the collectives records"
import json, os, sys
points = [json.loads(l) for l in open(sys.argv[1])]
points = [r for r in points if r["benchmark"] == "allreduce"]
assert len(points) == 2, len(points)
for r in points:
    clock = r["counters"]["perf::TASK-CLOCK"]
    m = r["metrics"]
    busy = m["counter_rates"]["cpu_busy"]
    assert clock > 0 and 0 < busy <= os.cpu_count() + 0.05, (clock, busy)
    assert abs(busy - clock * 1e-9 / (m["time_s_rank_avg"] * m["iters"])) < 0.5 * busy, m
    assert "every thread" in m["counters_scope"], m["counters_scope"]
plain = [json.loads(l) for l in open(sys.argv[2])]
assert all(r["counters"] == {} for r in plain), "counted without --counters"
PY

bad() {  # expected text, then arguments
  local want=$1
  shift
  set +e
  run3 "$@" --out "$tmp/bad.jsonl" > "$tmp/bad.txt" 2>&1
  local rc=$?
  set -e
  [[ $rc -ne 124 ]] || fail "'$*' hung"
  [[ $rc -eq 2 ]] || { cat "$tmp/bad.txt"; fail "'$*' exited $rc, expected 2 (bad input)"; }
  grep -q -- "$want" "$tmp/bad.txt" || { cat "$tmp/bad.txt"; fail "'$*': no '$want' in the message"; }
  local copies
  copies=$(grep -c -- "$want" "$tmp/bad.txt")
  [[ $copies -eq 1 ]] || fail "'$*': the message was printed $copies times (rank 0 only, please)"
  [[ ! -s "$tmp/bad.jsonl" ]] || fail "'$*' wrote a record"
}
bad "sizes out of order" -b 1M -e 8K
bad "unknown algorithm 'butterfly'" --algo ring,butterfly
bad "would need" -e 4096G
bad "unknown suffix" -e 12X
bad "unknown overlap engine 'threads'" --overlap threads
bad "with --memory device: expected nccl, mpi or all" --memory device --algo ring
bad "memory: gpu not in" --memory gpu
bad "memory shared: its nodes hold 1 to 2 ranks" --memory shared --shm-node-ranks 2
bad "overlap measures host memory: leave out --memory shared" --memory shared --overlap thread
bad "empty event name" --counters PAPI_TOT_CYC,
bad "algo shm: its nodes hold 1 to 2 ranks" --algo shm --shm-node-ranks 2
# --out that cannot take records: refused on rank 0, before any size runs
set +e
run3 -b 8 -e 8 --out "$tmp" > "$tmp/out.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q -- "--out: '$tmp' is a folder" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "--out a folder exited $rc"; }
bad "shm-chunk 100: expected a positive multiple of 64 bytes" --shm-chunk 100
bad "shm-chunk 2G: expected a positive multiple of 64 bytes, at most 1G" --shm-chunk 2G
bad "over 1 GiB a rank" --shm-chunk 512M --shm-slots 4
bad "shm-chunk '99999999999G': too large" --shm-chunk 99999999999G
bad "shm-slots: Value 0 not in range" --shm-slots 0
bad "shm-copy 'xpmem': expected one of auto, cma, fifo" --shm-copy xpmem
bad "iters: Value 0 not in range" --iters 0
bad "warmup: Value -1 not in range" --warmup -1
bad "check: 5 not in {0,1}" --check 5
bad "i 0: a step must be at least 1 byte" -i 0
bad "compute-ratio: 'inf': expected a finite number in (0, 1000]" --compute-ratio inf
bad "stepfactor: 'inf': expected a finite number in (1, 1000000]" -f inf
echo "collectives CLI: all cases passed"
