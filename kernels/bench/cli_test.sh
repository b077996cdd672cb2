#!/usr/bin/env bash
# `dlscale kernels` as a user meets it: --help, bad input (message naming the argument, exit 2,
# no record written), records that validate, and a run interrupted with SIGINT that keeps
# every record already written intact.
# usage: cli_test.sh path/to/dlscale source_dir
set -u
DLS="$1"; SRC="$2"
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/cli_test_lib.sh"  # TMP, ok, bad, refusal, finish

# expect_usage_error NAME PATTERN ARGS...: exit 2, stderr matches PATTERN, no output file;
# KERNELS_ENV (VAR=VALUE words) is the environment it runs in beside the session's
expect_usage_error() {
  local name="$1" pattern="$2"; shift 2
  rm -f "$TMP/out.jsonl"
  env ${KERNELS_ENV:-} "$DLS" kernels "$@" --out "$TMP/out.jsonl" >"$TMP/stdout" 2>"$TMP/stderr"
  refusal "$name" $? "$pattern" || return
  [ ! -e "$TMP/out.jsonl" ] || { bad "$name: wrote $TMP/out.jsonl"; return; }
  ok
}

expect_usage_error "malformed conv" "convolution descriptor 'mb16ic64ih56oc'" --op conv2d_fwd --shape mb16ic64ih56oc
expect_usage_error "unknown key" "unknown key 'zz'" --op conv2d_fwd --shape mb2ic3ih8oc4kh3zz1
expect_usage_error "bad gemm" "GEMM descriptor '64x64'" --op gemm --shape 64x64
expect_usage_error "unknown op" "unknown op 'convolution'" --op convolution --shape mb2ic3ih8oc4kh3
expect_usage_error "unknown backend" "unknown backend" --op gemm --shape 8x8x8 --backend mkl
expect_usage_error "no op" "names no op" --shape 8x8x8
expect_usage_error "bad threads" "--threads" --op gemm --shape 8x8x8 --threads two
expect_usage_error "zero threads" "--threads 0: expected 1..4096" --op gemm --shape 8x8x8 --threads 0
expect_usage_error "zero batch" "--mb 0: expected a positive batch" --op gemm --shape 8x8x8 --mb 0
expect_usage_error "NaN check limit" "check-limit: 'nan': expected a finite number >= 0" --op gemm --shape 8x8x8 --check-limit nan
expect_usage_error "infinite peak" "peak-gflops: 'inf': expected a finite number > 0" --op gemm --shape 8x8x8 --peak-gflops inf
expect_usage_error "missing file" "shapes" --shapes "$TMP/nope.txt"
expect_usage_error "bad mode" "mode" --op gemm --shape 8x8x8 --mode fast
expect_usage_error "bad line in file" "check_bad.txt:2" --shapes "$SRC/bench/testdata/check_bad.txt"
# --out that cannot take records: refused before any case runs (a folder failed at open as a
# runtime error, a device after the cases, at the sync)
for out in "" "$TMP" /dev/null; do
  "$DLS" kernels --op gemm --shape 8x8x8 --out "$out" >"$TMP/stdout" 2>"$TMP/stderr"
  rc=$?
  if [ "$rc" -eq 2 ] && grep -q -- "--out: " "$TMP/stderr"; then ok; else bad "--out '$out': exit $rc: $(cat "$TMP/stderr")"; fi
done
"$DLS" kernels --shape 8x8x8 --op gemm --counters "a,,b" >/dev/null 2>"$TMP/stderr"
[ $? -eq 2 ] && grep -q "empty event name" "$TMP/stderr" && ok || bad "bad --counters"

# counters over every thread of the case: 2 threads of GEMM keep between 0 and the cores busy,
# by perf::TASK-CLOCK over the timed calls (perf_event_open where PAPI cannot count here)
"$DLS" kernels --shape 256x256x256 --op gemm --threads 2 --counters software \
  --benchmark_min_time=0.05 --out "$TMP/c.jsonl" >/dev/null 2>"$TMP/stderr" || bad "counted gemm: $(cat "$TMP/stderr")"
python3 - "$TMP/c.jsonl" <<'PY' && ok || bad "counters of a kernel record"
import json, os, sys
r = json.loads(open(sys.argv[1]).readline())
m = r["metrics"]
assert r["counters"]["perf::TASK-CLOCK"] > 0, r["counters"]
assert 0 < m["counter_rates"]["cpu_busy"] <= os.cpu_count() + 0.05, m["counter_rates"]
assert m["counters_scope"].startswith("every thread"), m["counters_scope"]
assert r["counters"]["iterations"] >= 1
PY

# --help lists the ops and exits 0; the top-level command too
"$DLS" kernels --help >"$TMP/help" 2>&1 && grep -q "conv2d_bwd_filter" "$TMP/help" && ok || bad "kernels --help"
"$DLS" --help >/dev/null && ok || bad "dlscale --help"
"$DLS" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown command exit code"
# --version: the version, the commit it was built from, the BLAS it runs on
"$DLS" --version >"$TMP/version" 2>&1 && grep -Eq "^dlscale [0-9.]+ \(git ([0-9a-f]{40}|unknown)" "$TMP/version" \
  && grep -q "^blas: OpenBLAS" "$TMP/version" && grep -q "^mpi: " "$TMP/version" && ok || bad "dlscale --version: $(cat "$TMP/version")"

# perf on two tiny cases and two backends: 4 records, each valid, with the DESIGN keys
"$DLS" kernels --op conv2d_fwd,gemm --shape "gemm 16x16x16" --shape "conv2d_fwd mb2ic3ih8oc4kh3ph1" \
  --backend openblas,onednn --threads 1 --peak-gflops 10 --benchmark_min_time=0.01 \
  --out "$TMP/perf.jsonl" >"$TMP/stdout" 2>&1 || bad "perf run failed: $(cat "$TMP/stdout")"
python3 - "$TMP/perf.jsonl" <<'PY' && ok || bad "perf records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 4, len(recs)
for r in recs:
    assert r["schema"] == "dlscale.record/1" and r["kind"] == "kernel" and r["status"] == "ok", r
    m = r["metrics"]
    for k in ("op", "backend", "shape", "time_s", "time_s_min", "flop", "gflop_per_s", "pct_of_peak"):
        assert k in m, k
    assert m["time_s"] > 0 and m["time_s_min"] <= m["time_s"]
    assert r["check"]["status"] == "passed", r["check"]
    assert r["provenance"]["libraries"]["blas"]["corename"]
    assert m["peak_source"] == "argument"
    assert abs(m["gflop_per_s"] - m["flop"] / m["time_s"] * 1e-9) < 1e-6 * m["gflop_per_s"]
PY

# a case given twice (the backend and a batch repeated) is timed once, with a note: before, both
# shared one benchmark name and neither was timed
"$DLS" kernels --op gemm --shape 16x16x16 --backend openblas --backend openblas --mb 16,16 --threads 1 \
  --peak-gflops 10 --benchmark_min_time=0.01 --out "$TMP/twice.jsonl" >/dev/null 2>"$TMP/stderr" \
  || bad "repeated case run failed: $(cat "$TMP/stderr")"
grep -q "is given twice: timed once" "$TMP/stderr" && ok || bad "no note on a repeated case: $(cat "$TMP/stderr")"
python3 - "$TMP/twice.jsonl" <<'PY' && ok || bad "a repeated case's record"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 1, len(recs)
assert recs[0]["status"] == "ok" and recs[0]["metrics"]["time_s"] > 0, recs[0]
assert recs[0]["check"]["status"] == "passed", recs[0]["check"]
PY

# SIGINT in the middle of a run: the records written so far all parse, none is torn.
"$DLS" kernels --op gemm --shape 600x600x600 --shape 601x600x600 --shape 602x600x600 \
  --shape 603x600x600 --shape 604x600x600 --shape 605x600x600 --threads 1 --peak-gflops 10 \
  --benchmark_min_time=0.3 --out "$TMP/int.jsonl" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$TMP/int.jsonl" ] && break; sleep 0.1; done
kill -INT "$pid"; wait "$pid"; rc=$?
python3 - "$TMP/int.jsonl" <<'PY' && ok || bad "records after SIGINT"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert 1 <= len(lines) < 6, len(lines)
for l in lines:
    json.loads(l)
PY
[ "$rc" -eq 130 ] && ok || bad "interrupted run exited $rc, expected 130"

# --denormals: a wrong mode refused; with ftz the underflow case's denormal results flush to zero
# (its check allows FLT_MIN) and provenance records the mode in effect, keep by default
expect_usage_error "bad --denormals" "expected one of keep, ftz" --op scale --shape n64 --denormals daz
for mode in keep ftz; do
  "$DLS" kernels --op underflow --shape n4096 --threads 2 --mode check --denormals "$mode" \
    --out "$TMP/uf_$mode.jsonl" >/dev/null 2>&1 || { bad "underflow ops with --denormals $mode"; continue; }
  python3 - "$TMP/uf_$mode.jsonl" "$mode" <<'PY' && ok || bad "underflow records ($mode)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(r["metrics"]["op"] for r in recs) == ["scale", "scale_underflow"], recs
for r in recs:
    assert r["status"] == "ok" and r["check"]["status"] == "passed", r["check"]
    assert r["provenance"]["denormals"] == sys.argv[2], r["provenance"].get("denormals")
PY
done

# --cold-cache: the case runs checked and timed with a flush before each timed call, and the
# record says so (params.cold_cache: true); without the flag the key is absent, so that default
# records keep their ids
for flag in "" --cold-cache; do
  "$DLS" kernels --op scale --shape n4096 --threads 2 --benchmark_min_time=0.01 $flag \
    --out "$TMP/cold${flag}.jsonl" >/dev/null 2>"$TMP/stderr" || { bad "scale ${flag:-warm}: $(cat "$TMP/stderr")"; continue; }
  python3 - "$TMP/cold${flag}.jsonl" "${flag:+1}" <<'PY' && ok || bad "cold-cache record (${flag:-warm})"
import json, sys
(r,) = [json.loads(l) for l in open(sys.argv[1])]
assert r["status"] == "ok" and r["check"]["status"] == "passed", r
if sys.argv[2] == "1":
    assert r["params"]["cold_cache"] is True, r["params"]
else:
    assert "cold_cache" not in r["params"], r["params"]
assert r["metrics"]["time_s"] > 0, r["metrics"]
PY
done
expect_usage_error "--cold-cache with a value" "cold-cache" --op scale --shape n64 --cold-cache=maybe

# the BLAS core check (measure/blas_coretype.hpp): a core below the CPU forced through the
# environment is replaced under DLS_BLAS_CORETYPE=best by the family /proc/cpuinfo's flags call
# for, kept (and said) under auto and keep; a bad policy is refused before anything runs
for policy in best auto keep; do
  env OPENBLAS_CORETYPE=Prescott DLS_BLAS_CORETYPE=$policy "$DLS" kernels --op gemm --shape 64x64x64 \
    --threads 1 --benchmark_min_time=0.01 --out "$TMP/core_$policy.jsonl" >/dev/null 2>"$TMP/stderr" \
    || { bad "gemm under DLS_BLAS_CORETYPE=$policy: $(cat "$TMP/stderr")"; continue; }
  python3 - "$TMP/core_$policy.jsonl" "$policy" "$TMP/stderr" <<'PY' && ok || bad "BLAS core under DLS_BLAS_CORETYPE=$policy"
import json, sys
(r,) = [json.loads(l) for l in open(sys.argv[1])]
policy, err = sys.argv[2], open(sys.argv[3]).read()
blas = r["provenance"]["libraries"]["blas"]
core = blas["coretype"]
flags = set()
for line in open("/proc/cpuinfo"):
    if line.startswith("flags"):
        flags = set(line.split(":", 1)[1].split())
        break
avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags
fits = ("Cooperlake" if avx512 and "avx512_bf16" in flags else "SkylakeX" if avx512
        else "Haswell" if {"avx2", "fma"} <= flags else "Sandybridge" if "avx" in flags else "")
if blas["name"] != "OpenBLAS":
    assert core["chosen_by"] == "blis", core
elif policy == "best" and fits and "DYNAMIC_ARCH" in blas["config"]:
    assert blas["corename"] == fits, (blas["corename"], fits)
    assert core == {"chosen_by": "dlscale", "replaced": "Prescott", "cpu_fits": fits, "below_cpu": False}, core
    assert f"restarting with OPENBLAS_CORETYPE={fits}" in err, err
elif "DYNAMIC_ARCH" in blas["config"]:  # (an OpenBLAS built for one core ignores the variable)
    assert blas["corename"] == "Prescott", blas
    assert core["chosen_by"] == "environment" and core["replaced"] is None, core
    assert core["below_cpu"] == bool(fits), core
    assert not fits or "OPENBLAS_CORETYPE=Prescott in the environment (SSE kernels)" in err, err
else:
    assert core["chosen_by"] == "environment" and core["replaced"] is None, core
PY
done
KERNELS_ENV=DLS_BLAS_CORETYPE=Haswell expect_usage_error "bad DLS_BLAS_CORETYPE" \
  "DLS_BLAS_CORETYPE='Haswell': expected auto, keep or best" --op gemm --shape 8x8x8
KERNELS_ENV=DLS_DIRECT_ORDER=rows expect_usage_error "bad DLS_DIRECT_ORDER" \
  "DLS_DIRECT_ORDER 'rows': expected one of measure, weights, inputs" --op conv2d_direct_fwd --shape mb2ic3ih8oc4kh3

# the direct convolution's tile order (kernels/conv/direct_order.hpp) is recorded: the forced one,
# or one of the two where measured; the backward filter has none
for policy in weights inputs measure; do
  env DLS_DIRECT_ORDER=$policy "$DLS" kernels --op conv2d_direct_fwd,conv2d_direct_bwd_data,conv2d_direct_bwd_filter \
    --shape mb2ic8ih8oc8kh1 --threads 1 --benchmark_min_time=0.01 --out "$TMP/order_$policy.jsonl" >/dev/null 2>"$TMP/stderr" \
    || { bad "direct ops under DLS_DIRECT_ORDER=$policy: $(cat "$TMP/stderr")"; continue; }
  python3 - "$TMP/order_$policy.jsonl" "$policy" <<'PY' && ok || bad "tile order recorded under DLS_DIRECT_ORDER=$policy"
import json, sys
recs = {json.loads(l)["metrics"]["op"]: json.loads(l)["metrics"] for l in open(sys.argv[1])}
want = {"weights", "inputs"} if sys.argv[2] == "measure" else {sys.argv[2]}
for op in ("conv2d_direct_fwd", "conv2d_direct_bwd_data"):
    assert recs[op].get("tile_order") in want, (op, recs[op].get("tile_order"))
assert "tile_order" not in recs["conv2d_direct_bwd_filter"], recs["conv2d_direct_bwd_filter"]
PY
done
finish
