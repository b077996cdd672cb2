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
[[ $status -eq 0 ]] && echo "golden: ok"
exit $status
