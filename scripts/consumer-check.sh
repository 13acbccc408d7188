#!/usr/bin/env bash
# Checks the installed library the way a user meets it: `cmake --install` of a build into a temporary
# prefix, then examples/consumer (copied out of the repository) configured and built against that
# prefix alone, find_package for the C++ program and pkg-config for the C one; both run on the
# committed sample. Exits non-zero on the first thing that differs from what is expected:
#   - the installed libdepthmask.so.0: its SONAME, a RUNPATH of $ORIGIN (no RPATH), every dependency
#     resolving without LD_LIBRARY_PATH; no detail/ headers; the installed headers exactly those of
#     docs/CPP.md's "The installed headers" table; no build or source path in the package files; every
#     installed header compiling with `pkg-config --cflags depthmask` alone;
#   - mask_frame (C++) on data/sample frame 000000: its TIFF byte for byte the one the installed CLI
#     writes for that frame, and its kept/min/max line that of the CLI's .npy (numpy);
#   - mask_frame_c (C ABI): every pixel of its synthetic frame as the rule says.
# CI runs it after the CPU build's tests, on that build (no second build of the library).
#   scripts/consumer-check.sh [BUILD_DIR=build-cpu]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=$(cd "${1:-build-cpu}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/depthmask-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "consumer-check: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH  # everything must be found through RUNPATH, build RPATH and the system's folders

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install $build failed"; }
pc=$(find "$prefix" -name depthmask.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || fail "no depthmask.pc installed under $prefix"
libdir=$(dirname "$(dirname "$pc")")
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion depthmask)

# The library, its links and its dynamic section.
lib=$libdir/libdepthmask.so.$version
[ -f "$lib" ] && [ ! -L "$lib" ] || fail "no $lib"
[ "$(readlink "$libdir/libdepthmask.so.${version%%.*}")" = "libdepthmask.so.$version" ] || fail "libdepthmask.so.${version%%.*} does not link to libdepthmask.so.$version"
[ "$(readlink "$libdir/libdepthmask.so")" = "libdepthmask.so.${version%%.*}" ] || fail "libdepthmask.so does not link to the SONAME"
dyn=$(readelf -d "$lib")
grep -F "(SONAME)" <<<"$dyn" | grep -qF "[libdepthmask.so.${version%%.*}]" || fail "SONAME is not libdepthmask.so.${version%%.*}: $(grep SONAME <<<"$dyn")"
# shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
grep -F "(RUNPATH)" <<<"$dyn" | grep -qF '[$ORIGIN]' || fail "RUNPATH is not \$ORIGIN: $(grep -E 'R(UN)?PATH' <<<"$dyn")"
! grep -qF "(RPATH)" <<<"$dyn" || fail "an RPATH (searched before LD_LIBRARY_PATH) instead of a RUNPATH"
! ldd "$lib" | grep "not found" || fail "$lib has unresolved dependencies"
grep -E "\((SONAME|RUNPATH)\)" <<<"$dyn" | sed 's/^ */consumer-check: /'

# What is installed: public headers only, and nothing that points back into this tree.
[ -f "$prefix/include/depthmask/version.h" ] && [ -f "$prefix/include/depthmask/kernels/errors.h" ] || fail "headers missing under $prefix/include"
[ ! -e "$prefix/include/depthmask/detail" ] || fail "detail/ headers were installed"
if grep -rlF -e "$repo" -e "$build" "$libdir/cmake" "$pc"; then fail "the package files above name the build or source tree"; fi
find "$prefix/include" -name '*.h' | sort | sed "s|^$prefix/include/\(.*\)|#include <\1>|" >"$work/all_headers.cpp"
# shellcheck disable=SC2046  # pkg-config's flags are words
c++ -std=c++17 -fsyntax-only $(pkg-config --cflags depthmask) "$work/all_headers.cpp" || fail "the installed headers do not compile with pkg-config's flags"
echo '#include <depthmask/depthmask_c.h>' | cc -std=c11 -pedantic -Werror -fsyntax-only -I"$prefix/include" -x c - || fail "depthmask_c.h is not C11"
# Installed = documented: the headers under include/ are docs/CPP.md's table, no more, no fewer.
documented=$(sed -n '/^## The installed headers/,/^## The C++ facade/p' docs/CPP.md | grep -oE '^\| `depthmask/[a-z_/]+\.h`' | sed 's/^| `//; s/`$//' | sort)
installed=$(cd "$prefix/include" && find depthmask -name '*.h' | sort)
[ "$documented" = "$installed" ] || fail "the installed headers are not docs/CPP.md's table (<: only documented, >: only installed): $(diff <(echo "$documented") <(echo "$installed") | grep '^[<>]' | tr '\n' ' ')"
echo "consumer-check: $(wc -l <"$work/all_headers.cpp") installed headers compile against $prefix alone, as docs/CPP.md lists them"

# The consumer project, out of the repository: only the prefix can provide depthmask.
cp -r examples/consumer "$work/src"
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" || { cat "$work/configure.log"; fail "configuring examples/consumer failed"; }
grep -q "^depthmask_DIR:PATH=$prefix/" "$work/build/CMakeCache.txt" || fail "find_package found $(grep '^depthmask_DIR' "$work/build/CMakeCache.txt"), not $prefix"
cmake --build "$work/build" || fail "building examples/consumer failed"
if grep -lF -e "$repo" -e "$build" "$work/build/compile_commands.json" "$work/build/build.ninja" "$work/build/CMakeCache.txt"; then
  fail "the consumer's build above reaches into the build or source tree"
fi

# C++ on the sample's first frame, against the installed CLI's outputs for the same frames.
"$prefix/bin/depthmask" run --config config/default.yaml --output "$work/cli" >"$work/cli.log" 2>&1 || { cat "$work/cli.log"; fail "the installed CLI failed on the sample"; }
"$work/build/mask_frame" data/sample/depth/000000.png data/sample/mask/000000.png "$work/frame.tiff" | tee "$work/cpp.out"
want=$(python3 -c 'import array, ast, math, sys  # the .npy (1.0: <f4, C order) with the standard library alone
b = open(sys.argv[1], "rb").read(); n = int.from_bytes(b[8:10], "little"); h = ast.literal_eval(b[10:10 + n].decode("latin1"))
assert b[:8] == b"\x93NUMPY\x01\x00" and h["descr"] == "<f4" and not h["fortran_order"], h
a = array.array("f", b[10 + n:]); k = [v for v in a if math.isfinite(v) and v > 0]
print("kept %d of %d pixels, min %.6f m, max %.6f m" % (len(k), len(a), min(k, default=0.0), max(k, default=0.0)))' "$work/cli/000000.npy")
got=$(grep '^kept ' "$work/cpp.out" || true)
[ "$got" = "$want" ] || fail "mask_frame printed '$got', the CLI's output says '$want'"
grep -q '^backend [a-z_]*: ' "$work/cpp.out" || fail "mask_frame did not name its backend"
cmp "$work/frame.tiff" "$work/cli/000000.tiff" || fail "mask_frame's TIFF differs from the CLI's"

# C on its synthetic frame (it checks every pixel itself).
"$work/build/mask_frame_c" || fail "mask_frame_c failed"
echo "consumer-check: ok (depthmask $version installed to a temporary prefix; C++ and C consumers built and run against it)"
