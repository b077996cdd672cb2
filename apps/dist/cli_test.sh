#!/usr/bin/env bash
# `dlscale train` distributed, as a user meets it under mpirun at 2 ranks: an ssgd run writes
# exactly one record (rank 0's) with the global throughput and every rank's placement; a rank
# that fails part-way makes the whole job exit non-zero, never hang; --scheme single under a
# multi-rank launch is refused; communication teams are recorded, and refused out of range or
# without the thread engine. Every run is bounded by `timeout`.
# --scheme ps-sync: refused at 1 rank (no worker), naming why; at 3 ranks (2 workers, a server)
# one record with the scheme's name and an exchange a step.
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
assert p["buckets"] > 1 and p["allreduce"] == "auto" and m["allreduce"] in ("mpi", "ring", "recdbl", "rabenseifner", "tree", "shm"), (p, m["allreduce"])
assert abs(m["images_per_s"] - 16 / m["step_time_s"]) < 1e-6 * m["images_per_s"], m["images_per_s"]
assert [e["rank"] for e in m["placement"]] == [0, 1] and all(e["threads"] == 1 for e in m["placement"]), m["placement"]
for k in ("input", "forward", "backward", "update", "sync"):
    assert m["phase_s_max"][k] >= m["phase_s"][k] - 1e-12, k
assert p["comm_teams"] == 1 and p["comm_threads_per_team"] == 1, p
PY

# communication teams: 3 teams of 2 threads, recorded next to the buckets
run2 --scheme ssgd --bucket-mb 0.01 --comm-teams 3 --comm-threads-per-team 2 --out "$tmp/t.jsonl" > "$tmp/t.txt" 2>&1 || { rc=$?; cat "$tmp/t.txt"; fail "ssgd --comm-teams 3 exited $rc"; }
python3 - "$tmp/t.jsonl" <<'PY' || fail "teams record contents"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
p = r["params"]
assert r["status"] == "ok", r
assert p["comm_teams"] == 3 and p["comm_threads_per_team"] == 2 and p["overlap"] == "thread", p
assert p["buckets"] >= 3, p["buckets"]
PY
# out of range, or without the thread engine: refused (exit 2) naming the option
for bad in "--comm-teams 0" "--comm-teams 17" "--comm-threads-per-team 65" "--comm-teams 2 --overlap none"; do
  set +e
  # shellcheck disable=SC2086  # $bad is several words on purpose
  run2 --scheme ssgd $bad > "$tmp/b.txt" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { cat "$tmp/b.txt"; fail "'$bad' exited $rc, expected 2"; }
  grep -q -- "${bad%% [0-9]*}" "$tmp/b.txt" || { cat "$tmp/b.txt"; fail "'$bad' refused without naming ${bad%% [0-9]*}"; }
done
grep -q -- "--overlap none" "$tmp/b.txt" || { cat "$tmp/b.txt"; fail "teams without the thread engine: --overlap not named"; }

# rank 1 fails at step 3: every rank exits, non-zero, with the failing rank named
set +e
run2 --scheme ssgd --inject-failure 1:3 --out "$tmp/f.jsonl" > "$tmp/f.txt" 2>&1
rc=$?
set -e
[[ $rc -ne 124 ]] || fail "a failed rank left the job hanging"
[[ $rc -eq 3 ]] || { cat "$tmp/f.txt"; fail "a failed rank: the job exited $rc, expected 3 (a runtime error)"; }
grep -q "rank 1 of 2: error: failure injected at step 3" "$tmp/f.txt" || { cat "$tmp/f.txt"; fail "the failing rank was not named"; }
# the same under shm, whose peers wait on shared memory, not in MPI: the failing rank must not
# wait in the window's collective free for a peer that waits on it
set +e
run2 --scheme ssgd --allreduce shm --inject-failure 1:3 > "$tmp/f2.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 3 ]] || { cat "$tmp/f2.txt"; fail "a failed rank under --allreduce shm: the job exited $rc, expected 3"; }

# a multi-rank launch without a scheme
set +e
run2 > "$tmp/s.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || { cat "$tmp/s.txt"; fail "--scheme single at 2 ranks exited $rc, expected 2"; }
grep -q "choose ssgd or localsgd" "$tmp/s.txt" || fail "no hint to choose a scheme"

# ps-sync: at 1 rank there is no worker beside the server (exit 2, said); at 3 ranks the servers
# serve every step and leave
runps() { local np=$1; shift; timeout 120 "$mpiexec" -np "$np" "${flags[@]}" "$dlscale" train -m cifar10_quick \
            -b 8 --image 16 --data synthetic:320 --steps 8 --warmup-steps 2 --eval-every -1 --threads 1 --scheme ps-sync "$@"; }
set +e
runps 1 > "$tmp/p1.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || { cat "$tmp/p1.txt"; fail "--scheme ps-sync at 1 rank exited $rc, expected 2"; }
grep -q "scheme ps-sync at 1 rank: needs a server rank and a worker" "$tmp/p1.txt" || { cat "$tmp/p1.txt"; fail "ps-sync at 1 rank: refused without saying why"; }
runps 3 --out "$tmp/p.jsonl" > "$tmp/p.txt" 2>&1 || { rc=$?; cat "$tmp/p.txt"; fail "ps-sync at 3 ranks exited $rc"; }
[[ $(wc -l < "$tmp/p.jsonl") -eq 1 ]] || fail "ps-sync: expected one record (worker 0's), got $(wc -l < "$tmp/p.jsonl")"
python3 - "$tmp/p.jsonl" <<'PY' || fail "ps-sync record contents"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
m, p = r["metrics"], r["params"]
assert r["status"] == "ok", r
assert p["scheme"] == "ps-sync" and m["scheme"] == "ps-sync", (p["scheme"], m["scheme"])
assert m["steps"] == 8 and m["exchanges"] == m["steps"], (m["steps"], m["exchanges"])
assert m["ranks"] == 2 and p["ps_sync"] == {"servers": 1, "workers": 2, "server_idle_sleep_us": 50}, (m["ranks"], p["ps_sync"])
assert [e["rank"] for e in m["placement"]] == [0, 1, 2], m["placement"]
PY

# a count or rate out of range (as one process, as a plan's point would give it): exit 2 before
# anything runs, the option and what it takes named, no record
for bad in "--steps 0" "--steps 2.5" "--threads 0" "--warmup-steps -2" "--train-samples -5" \
           "--eval-every -3" "--lr nan" "--momentum inf" "--holdout 2" "--bucket-mb 0" \
           "--ref-batch 0" "--lr-steps 5,-2" "--width nan" "--width 1e9"; do
  set +e
  # shellcheck disable=SC2086  # $bad is two words on purpose
  timeout 60 "$dlscale" train -m cifar10_quick --data synthetic:64 $bad --out "$tmp/bad.jsonl" > "$tmp/bad.txt" 2>&1
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { cat "$tmp/bad.txt"; fail "'$bad' exited $rc, expected 2"; }
  grep -q -- "${bad%% *}: '.*': expected a \(finite\|whole\) number\|${bad%% *}: Value" "$tmp/bad.txt" \
    || { cat "$tmp/bad.txt"; fail "'$bad' refused without naming ${bad%% *} and what it takes"; }
  [[ ! -e "$tmp/bad.jsonl" ]] || fail "'$bad' wrote a record"
done
# epochs beyond what a step count holds: refused naming --epochs (it ran one step)
set +e
timeout 60 "$dlscale" train -m cifar10_quick --data synthetic:64 --epochs 1e300 --out "$tmp/big.jsonl" > "$tmp/big.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q -- "--epochs 1e+300 x .* steps, over 1e15" "$tmp/big.txt" || { cat "$tmp/big.txt"; fail "--epochs 1e300 exited $rc"; }
echo "dist cli: ok"
