#!/usr/bin/env bash
# Golden launcher lines and batch scripts: for every shipped site, `dlscale run --dry-run` of a
# small plan (harness/run/golden/plan.yaml) against the checked-in text golden/<site>.txt,
# reviewed by hand once. After an intended change: golden_test.sh DLSCALE --update, review the
# diff, commit.
# usage: golden_test.sh DLSCALE [--update]
set -euo pipefail
dlscale=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
status=0
for f in "$root"/site_configs/*.yaml; do
  site=$(basename "$f" .yaml)
  got=$(DLSCALE_ROOT="$root" "$dlscale" run --site "$site" --plan "$here/golden/plan.yaml" --dry-run --dlscale dlscale \
        --campaign "results/golden/$site")
  if [[ "${2:-}" == "--update" ]]; then
    printf '%s\n' "$got" > "$here/golden/$site.txt"
  elif ! diff -u "$here/golden/$site.txt" <(printf '%s\n' "$got"); then
    echo "FAIL: $site: the launcher lines or batch scripts changed (see the diff above)"
    status=1
  fi
done
# a point whose subcommand would refuse its arguments stops the plan before anything runs or is
# written (it ran, failed every such point and exited 1), naming the experiment and the point;
# a run of another binary (--dlscale) is not second-guessed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'name: refused\nexperiments:\n  - name: t\n    kind: train\n    args: {model: cifar10_quick}\n    sweep: {steps: ["2", "0"]}\n  - name: k\n    kind: kernels\n    args: {op: gemm}\n    sweep: {shape: ["8x8x8", "0x1x1"]}\n  - name: c\n    kind: collectives\n    args: {maxbytes: 1K}\n    sweep: {algo: [ring, bogus]}\n' > "$tmp/plan.yaml"
for mode in --dry-run ""; do
  rc=0
  # shellcheck disable=SC2086  # $mode is no word or one on purpose
  DLSCALE_ROOT="$root" "$dlscale" run --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/c" $mode > "$tmp/out.txt" 2>&1 || rc=$?
  if [[ $rc -ne 2 ]] || ! grep -q "experiment t .*\"steps\":\"0\".*dlscale train would refuse it: --steps: '0': expected a whole number >= 1" "$tmp/out.txt" \
     || [[ -e "$tmp/c" ]]; then
    cat "$tmp/out.txt"; echo "FAIL: refused arguments ($mode): exit $rc, or no message, or a campaign was made"; status=1
  fi
done
sed -i 's/"2", "0"/"2", "3"/' "$tmp/plan.yaml"
rc=0
DLSCALE_ROOT="$root" "$dlscale" run --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/c" --dry-run > "$tmp/out.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && grep -q "experiment k .*dlscale kernels would refuse it: --shape: GEMM descriptor '0x1x1'" "$tmp/out.txt" \
  || { cat "$tmp/out.txt"; echo "FAIL: a kernels point's bad shape not refused (exit $rc)"; status=1; }
sed -i 's/"0x1x1"/"4x4x4"/' "$tmp/plan.yaml"
rc=0
DLSCALE_ROOT="$root" "$dlscale" run --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/c" --dry-run > "$tmp/out.txt" 2>&1 || rc=$?
[[ $rc -eq 2 ]] && grep -q "experiment c .*dlscale collectives would refuse it: unknown algorithm 'bogus'" "$tmp/out.txt" \
  || { cat "$tmp/out.txt"; echo "FAIL: a collectives point's unknown algorithm not refused (exit $rc)"; status=1; }
DLSCALE_ROOT="$root" "$dlscale" run --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/c" --dry-run --dlscale dlscale > /dev/null 2>&1 \
  || { echo "FAIL: another binary's arguments were judged by this one"; status=1; }
[[ $status -eq 0 ]] && echo "golden: ok"
exit $status
