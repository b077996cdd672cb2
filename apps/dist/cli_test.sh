#!/usr/bin/env bash
# `dlscale train` distributed, as a user meets it under mpirun at 2 ranks: an ssgd run writes
# exactly one record (rank 0's) with the global throughput and every rank's placement; a rank
# that fails part-way makes the whole job exit non-zero, never hang; --scheme single under a
# multi-rank launch is refused. Every run is bounded by `timeout`.
# usage: cli_test.sh MPIEXEC DLSCALE [mpiexec flags...]
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/mpi_test_lib.sh" "$@" || exit 1  # mpiexec, dlscale, flags, $tmp, fail, gpu_probe
run2() { timeout 120 "$mpiexec" -np 2 "${flags[@]}" "$dlscale" train -m cifar10_quick -b 8 --image 16 \
           --data synthetic:320 --steps 8 --warmup-steps 2 --eval-every -1 --threads 1 "$@"; }

run2 --scheme ssgd --bucket-mb 0.05 --out "$tmp/r.jsonl" > "$tmp/out.txt" 2>&1 || { rc=$?; cat "$tmp/out.txt"; fail "ssgd run exited $rc"; }
[[ $(wc -l < "$tmp/r.jsonl") -eq 1 ]] || fail "expected one record (rank 0's), got $(wc -l < "$tmp/r.jsonl")"
python3 - "$tmp/r.jsonl" <<'PY' || fail "record contents"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
m, p = r["metrics"], r["params"]
assert r["status"] == "ok", r
assert p["scheme"] == "ssgd" and m["scheme"] == "ssgd" and m["ranks"] == 2, (p, m["ranks"])
assert p["buckets"] > 1 and p["allreduce"] == "auto" and m["allreduce"] in ("mpi", "ring", "recdbl", "rabenseifner", "tree"), (p, m["allreduce"])
assert abs(m["images_per_s"] - 16 / m["step_time_s"]) < 1e-6 * m["images_per_s"], m["images_per_s"]
assert [e["rank"] for e in m["placement"]] == [0, 1] and all(e["threads"] == 1 for e in m["placement"]), m["placement"]
for k in ("input", "forward", "backward", "update", "sync"):
    assert m["phase_s_max"][k] >= m["phase_s"][k] - 1e-12, k
PY

# rank 1 fails at step 3: every rank exits, non-zero, with the failing rank named
set +e
run2 --scheme ssgd --inject-failure 1:3 --out "$tmp/f.jsonl" > "$tmp/f.txt" 2>&1
rc=$?
set -e
[[ $rc -ne 124 ]] || fail "a failed rank left the job hanging"
[[ $rc -eq 3 ]] || { cat "$tmp/f.txt"; fail "a failed rank: the job exited $rc, expected 3 (a runtime error)"; }
grep -q "rank 1 of 2: error: failure injected at step 3" "$tmp/f.txt" || { cat "$tmp/f.txt"; fail "the failing rank was not named"; }

# a multi-rank launch without a scheme
set +e
run2 > "$tmp/s.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || { cat "$tmp/s.txt"; fail "--scheme single at 2 ranks exited $rc, expected 2"; }
grep -q "choose ssgd or localsgd" "$tmp/s.txt" || fail "no hint to choose a scheme"
echo "dist cli: ok"
