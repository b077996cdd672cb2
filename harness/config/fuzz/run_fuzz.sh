#!/usr/bin/env bash
# Fuzz the site and plan parsers with libFuzzer (an optional build: clang's fuzzer runtime).
# The corpus starts from the shipped site configurations and plans and is kept in corpus/
# (commit what it adds: the inputs that reached new code).
#   run_fuzz.sh [SECONDS]       build (build-fuzz/) and fuzz for SECONDS (default 300)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
secs=${1:-300}
out="$root/build-fuzz"
mkdir -p "$out" "$here/corpus"
cp -n "$root"/site_configs/*.yaml "$root"/harness/plans/*.yaml "$here/corpus/" 2>/dev/null || true
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root")
srcs=("$here/config_fuzz.cpp" "$root"/harness/config/{yaml_reader,site,plan}.cpp "$root/harness/instrument/record.cpp")
clang++ "${flags[@]}" "${srcs[@]}" -lyaml-cpp -lfmt -o "$out/config_fuzz"
"$out/config_fuzz" "$here/corpus" -max_total_time="$secs" -max_len=4096 -timeout=5 -print_final_stats=1
