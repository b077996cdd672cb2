#!/usr/bin/env bash
# The tree's format and lint checks (CTest: format_cpp, lint_python):
#   lint.sh cpp      clang-format 14 (Debian 12's; the project's .clang-format) --dry-run -Werror on
#                    every C++ and CUDA file git tracks
#   lint.sh python   ruff check and ruff format --check (ruff.toml; ruff from .venv/, which
#                    scripts/setup.sh fills from PyPI) on every Python file git tracks
#   lint.sh layers   the #include graph against the layers of docs/DESIGN.md (include_layers.py)
#   lint.sh functions  no function over 60 lines of code outside the shrinking allow list
#                    (function_length.py; lizard from .venv/ like ruff; DLS_REQUIRE_LIZARD)
# Without the tool (or with another clang-format major version, which formats differently) the
# check prints DLS_SKIP(no TOOL) and exits 77, or fails where DLS_REQUIRE_CLANG_FORMAT or
# DLS_REQUIRE_RUFF is set (CI sets both). To fix what it finds: clang-format -i FILES,
# .venv/bin/ruff format FILES and .venv/bin/ruff check --fix FILES.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source "$root/scripts/test_skip.sh"
case ${1:-} in
  cpp)
    command -v clang-format > /dev/null || skip_or_fail clang-format DLS_REQUIRE_CLANG_FORMAT "clang-format is not installed (scripts/setup.sh installs it)"
    version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
    [[ $version == 14 ]] || skip_or_fail "clang-format 14" DLS_REQUIRE_CLANG_FORMAT "clang-format $version formats differently from Debian 12's 14"
    mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.inc' '*.h')
    clang-format --dry-run -Werror "${files[@]}"
    echo "clang-format: ${#files[@]} files clean"
    ;;
  layers)
    /usr/bin/python3 "$root/scripts/include_layers.py"
    ;;
  functions)
    lizard="$root/.venv/bin/lizard"
    [[ -x $lizard ]] || skip_or_fail lizard DLS_REQUIRE_LIZARD "lizard is not installed in $root/.venv (scripts/setup.sh installs it from PyPI)"
    /usr/bin/python3 "$root/scripts/function_length.py" "$lizard"
    ;;
  python)
    ruff="$root/.venv/bin/ruff"
    [[ -x $ruff ]] || skip_or_fail ruff DLS_REQUIRE_RUFF "ruff is not installed in $root/.venv (scripts/setup.sh installs it from PyPI)"
    mapfile -t files < <(git ls-files '*.py')
    "$ruff" check --no-cache "${files[@]}"
    "$ruff" format --no-cache --check "${files[@]}"
    echo "ruff $("$ruff" --version | cut -d' ' -f2): ${#files[@]} files clean"
    ;;
  *)
    echo "usage: lint.sh cpp|python|layers|functions" >&2
    exit 2
    ;;
esac
