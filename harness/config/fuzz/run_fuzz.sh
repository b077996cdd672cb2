#!/usr/bin/env bash
# Fuzz the site and plan parsers, the expansion and the script writers with libFuzzer (clang's
# fuzzer runtime, libclang-rt-14-dev; scripts/setup.sh installs both). The committed corpus
# (corpus/: inputs that reached new code) and the shipped sites and plans are read-only seeds;
# what the run finds goes to build-fuzz/corpus/. A crash, a sanitizer report, a hang (5 s) or a
# broken script invariant fails the run; the reproducer is in build-fuzz/ (crash-*, timeout-*).
#   run_fuzz.sh [SECONDS]       build (build-fuzz/) and fuzz for SECONDS (default 300)
#   run_fuzz.sh --merge         add what build-fuzz/corpus/ found to corpus/ (then commit it)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/build-fuzz"
mkdir -p "$out/corpus" "$out/seeds"
cp "$root"/site_configs/*.yaml "$root"/harness/plans/*.yaml "$out/seeds/"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root")
srcs=("$here/config_fuzz.cpp" "$root"/harness/config/{yaml_reader,safe_text,site,plan,criterion}.cpp "$root"/harness/run/launcher.cpp
      "$root"/measure/{record,jsonl,utf8}.cpp)
clang++ "${flags[@]}" "${srcs[@]}" -lyaml-cpp -lfmt -o "$out/config_fuzz"
if [[ ${1:-} == --merge ]]; then
  "$out/config_fuzz" -merge=1 "$here/corpus" "$out/corpus"
  exit 0
fi
secs=${1:-300}
cd "$out"  # crash-*, timeout-* reproducers land here
"$out/config_fuzz" "$out/corpus" "$here/corpus" "$out/seeds" -max_total_time="$secs" -max_len=4096 -timeout=5 \
  -print_final_stats=1
