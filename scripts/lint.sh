#!/usr/bin/env bash
# The team's habits, checked as CI checks them (.ci/run):
#   scripts/lint.sh format              clang-format-14 --dry-run -Werror over every C/C++/CUDA file of
#                                       app/ lib/ kernels/ bench/ tests/ examples/ (the repository's .clang-format)
#   scripts/lint.sh format --fix        the same, rewriting the files
#   scripts/lint.sh tidy [BUILD_DIR]    clang-tidy-14 with .clang-tidy (warnings are errors) over the
#                                       sources of lib/, kernels/ and app/ (kernels' .cu files are not in a
#                                       CPU build), from BUILD_DIR/compile_commands.json (default build-cpu:
#                                       a CPU-only build configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON);
#                                       among the checks: no function over 150 lines
#   scripts/lint.sh size                no file of lib/, kernels/ or app/ over 600 lines (issue 27): each
#                                       one longer is named with its count
#   scripts/lint.sh doxygen [BUILD_DIR] Doxygen (the repository's Doxyfile) over the headers
#                                       `cmake --install BUILD_DIR --component headers` installs (BUILD_DIR
#                                       configured; default build-cpu): every public declaration needs a
#                                       `///` comment, and every warning fails. Pages and log go to
#                                       BUILD_DIR/doxygen/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = size ] || bash scripts/install-deps.sh --lint >/dev/null

case "${1:-}" in
  format)
    mapfile -t files < <(git ls-files 'app/*' 'lib/*' 'kernels/*' 'bench/*' 'tests/*' 'examples/*' | grep -E '\.(c|cpp|h|cu|cuh|hpp)$')
    if [ "${2:-}" = "--fix" ]; then
      clang-format-14 -i "${files[@]}"
    else
      clang-format-14 --dry-run -Werror "${files[@]}"
    fi
    echo "lint: format: ${#files[@]} files follow .clang-format"
    ;;
  size)
    max=600
    over=0
    while IFS= read -r f; do
      [ -f "$f" ] || continue
      n=$(wc -l <"$f")
      if [ "$n" -gt "$max" ]; then
        echo "lint: size: $f has $n lines (at most $max)" >&2
        over=$((over + 1))
      fi
    done < <(git ls-files --cached --others --exclude-standard 'app/*' 'lib/*' 'kernels/*')
    [ "$over" -eq 0 ] || {
      echo "lint: size: $over file(s) of app/ lib/ kernels/ over $max lines: split them along their seams" >&2
      exit 1
    }
    echo "lint: size: no file of app/ lib/ kernels/ over $max lines"
    ;;
  tidy)
    build="${2:-build-cpu}"
    [ -f "$build/compile_commands.json" ] || {
      echo "lint: $build/compile_commands.json is missing: configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON" >&2
      exit 2
    }
    root="$(pwd)"
    start=$(date +%s)
    run-clang-tidy-14 -p "$build" -j "${JOBS:-$(nproc)}" -quiet "^$root/(lib|kernels|app)/.*\.cpp$" >"$build/tidy.log" 2>&1 || {
      grep -E 'warning:|error:' "$build/tidy.log" | sort -u >&2 || cat "$build/tidy.log" >&2
      echo "lint: tidy: clang-tidy found problems (full log: $build/tidy.log)" >&2
      exit 1
    }
    n=$(grep -c '^clang-tidy-14 ' "$build/tidy.log" || true)
    echo "lint: tidy: $n files of lib/, kernels/ and app/ clean in $(($(date +%s) - start)) s"
    ;;
  doxygen)
    build="${2:-build-cpu}"
    [ -f "$build/CMakeCache.txt" ] || { echo "lint: $build is not a configured build folder" >&2; exit 2; }
    out="$(cd "$build" && pwd)/doxygen"
    rm -rf "$out"
    mkdir -p "$out"
    cmake --install "$build" --component headers --prefix "$out/prefix" >"$out/install.log"
    n=$(find "$out/prefix/include" -name '*.h' | wc -l)
    DEPTHMASK_DOXYGEN_INPUT="$out/prefix/include" DEPTHMASK_DOXYGEN_OUTPUT="$out" doxygen Doxyfile >"$out/doxygen.log" 2>&1 &&
      [ ! -s "$out/warnings.log" ] || {
      cat "$out/warnings.log" "$out/doxygen.log" >&2
      echo "lint: doxygen: the installed headers' documentation has the problems above (log: $out/warnings.log)" >&2
      exit 1
    }
    echo "lint: doxygen: every declaration of the $n installed headers is documented ($out/html/index.html)"
    ;;
  *)
    echo "usage: scripts/lint.sh format [--fix] | tidy [BUILD_DIR] | size | doxygen [BUILD_DIR]" >&2
    exit 2
    ;;
esac
