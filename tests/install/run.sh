#!/bin/sh
# run.sh BUILD SRC -- install capprof into a temporary prefix, then build a
# separate program against it with find_package (static and shared), with
# pkg-config, and with the installed tool's 'capprof cflags'/'ldflags', run
# each, and read the dumps with the installed capprof tool. A C++-only CMake
# project must get its C++ compiler's hooks (Clang: after inlining).
set -eu
build=$1 src=$2
work=$build/tests/install-work
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/capprof/capprof.h lib/libcapprof.a lib/libcapprof.so bin/capprof \
         lib/cmake/capprof/capprofConfig.cmake lib/pkgconfig/capprof.pc \
         lib/pkgconfig/capprof-static.pc share/man/man1/capprof.1 \
         share/doc/capprof/README.md share/doc/capprof/tool.md share/doc/capprof/runtime.md \
         share/bash-completion/completions/capprof; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done

check() {  # check DUMP -- the installed tool reads it and sees the calls
  "$prefix/bin/capprof" info "$1" > "$1.info"
  grep -q "app-main" "$1.info" || { echo "info lacks the thread"; cat "$1.info"; exit 1; }
  "$prefix/bin/capprof" tree "$1" > "$1.tree"
  grep -Eq "^ +100 " "$1.tree" || { echo "tree lacks the 100 calls"; cat "$1.tree"; exit 1; }
}

cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/configure.log"
cmake --build "$work/consumer" > "$work/build.log"
for app in app_static app_shared; do
  (cd "$work" && CAPPROF_OUTPUT="$work/$app.capprof" "$work/consumer/$app" > /dev/null)
  check "$work/$app.capprof"
done
if ldd "$work/consumer/app_shared" | grep -q "libcapprof.so"; then :; else
  echo "app_shared is not linked with libcapprof.so"; exit 1
fi

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -finstrument-functions -o "$work/app_pc" "$src/tests/install/consumer/app.c" \
  $(pkg-config --cflags --libs capprof) -lpthread
(cd "$work" && LD_LIBRARY_PATH="$prefix/lib" CAPPROF_OUTPUT="$work/app_pc.capprof" \
  "$work/app_pc" > /dev/null)
check "$work/app_pc.capprof"

# The installed tool's flags, as a Makefile would use them; -pg at link time
# must not bring gprof's gmon.out.
for cc in gcc clang; do
  command -v $cc >/dev/null || continue
  for link in "" --static; do
    cflags=$("$prefix/bin/capprof" cflags $cc)
    ldflags=$("$prefix/bin/capprof" ldflags $link)
    app=app_$cc${link#--}
    # shellcheck disable=SC2086
    $cc -O2 -g -I"$prefix/include" $cflags -c "$src/tests/install/consumer/app.c" -o "$work/$app.o"
    # shellcheck disable=SC2086
    $cc $cflags -o "$work/$app" "$work/$app.o" $ldflags
    (cd "$work" && CAPPROF_OUTPUT="$work/$app.capprof" "$work/$app" > /dev/null)
    [ ! -e "$work/gmon.out" ] || { echo "$app wrote gprof's gmon.out"; exit 1; }
    check "$work/$app.capprof"
  done
done
case $("$prefix/bin/capprof" cflags gcc) in
  *-mfentry*) ;;
  *) [ "$(uname -m)" != x86_64 ] || { echo "capprof cflags gcc: not the fentry mode"; exit 1; } ;;
esac
[ "$("$prefix/bin/capprof" cflags clang++)" = "-finstrument-functions-after-inlining" ] || {
  echo "capprof cflags clang++: $("$prefix/bin/capprof" cflags clang++)"; exit 1; }

# A C++-only project: with Clang, after-inlining hooks; with GCC, its own.
for cxx in clang++ g++; do
  command -v $cxx >/dev/null || continue
  want=$("$prefix/bin/capprof" cflags $cxx | cut -d' ' -f1)
  cmake -S "$src/tests/install/consumer_cxx" -B "$work/cxx-$cxx" -DCMAKE_CXX_COMPILER=$cxx \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/configure-$cxx.log"
  cmake --build "$work/cxx-$cxx" > "$work/build-$cxx.log"
  grep -q -- "$want" "$work/cxx-$cxx/compile_commands.json" || {
    echo "C++-only project with $cxx was not built with $want"; cat "$work/cxx-$cxx/compile_commands.json"; exit 1; }
  (cd "$work" && CAPPROF_OUTPUT="$work/cxx-$cxx.capprof" "$work/cxx-$cxx/app_cxx" > /dev/null)
  check "$work/cxx-$cxx.capprof"
done
echo "ok: installed library works with find_package (static, shared, C++ only), pkg-config and capprof cflags/ldflags"
# capprof-static.pc: the program starts without any library path
cc -finstrument-functions -o "$work/app_static_pc" "$src/tests/install/consumer/app.c" \
  $(pkg-config --cflags --libs capprof-static)
if ldd "$work/app_static_pc" | grep -q libcapprof; then
  echo "capprof-static.pc links the shared library"; exit 1
fi
(cd "$work" && CAPPROF_OUTPUT="$work/app_static_pc.capprof" "$work/app_static_pc" > /dev/null)
check "$work/app_static_pc.capprof"

# one version: the tool, pkg-config and the CMake package agree
v=$(pkg-config --modversion capprof)
[ "$("$prefix/bin/capprof" --version)" = "capprof $v" ] ||
  { echo "capprof --version: $("$prefix/bin/capprof" --version), pkg-config: $v"; exit 1; }
[ "$(pkg-config --modversion capprof-static)" = "$v" ] || { echo "capprof-static.pc version"; exit 1; }
grep -q "PACKAGE_VERSION \"$v\"" "$prefix/lib/cmake/capprof/capprofConfigVersion.cmake" ||
  { echo "the CMake package's version is not $v"; exit 1; }

# the manual page renders, names every command and every runtime variable
man -l "$prefix/share/man/man1/capprof.1" > "$work/man.txt" 2> "$work/man.err" ||
  { echo "man -l failed: $(cat "$work/man.err")"; exit 1; }
MANPATH="$prefix/share/man" man -P cat capprof > "$work/man2.txt" 2>&1 ||
  { echo "man capprof failed: $(cat "$work/man2.txt")"; exit 1; }
grep -q "capprof $v" "$work/man2.txt" || { echo "man capprof lacks the version $v"; exit 1; }
for c in $("$prefix/bin/capprof" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
  grep -Eq "^       $c " "$work/man.txt" ||
    { echo "the manual page (docs/man/capprof.1) lacks the command '$c'"; exit 1; }
done
for var in $(sed -n '/^## Environment/,/^## /p' "$src/docs/runtime.md" | grep -o '^| `CAPPROF_[A-Z_]*`' |
             tr -d '|` '); do
  grep -q "^       $var" "$work/man.txt" ||
    { echo "the manual page (docs/man/capprof.1) lacks $var (docs/runtime.md has it)"; exit 1; }
done
[ "$(groff -man -ww -z "$prefix/share/man/man1/capprof.1" 2>&1 | wc -l)" = 0 ] ||
  { echo "groff warns about capprof.1"; exit 1; }
# the manual page's example builds and runs as written (its gcc lines)
mkdir -p "$work/man-example"
cp "$src/tests/install/consumer/app.c" "$work/man-example/app.c"
sed -n '/^EXAMPLES/,/^[A-Z]/p' "$work/man.txt" | sed -n 's/^ *\(gcc .*\)$/\1/p' > "$work/man-example/build.sh"
grep -q 'capprof cflags' "$work/man-example/build.sh" && grep -q 'capprof ldflags' "$work/man-example/build.sh" ||
  { echo "the manual page's example does not use capprof cflags/ldflags"; cat "$work/man-example/build.sh"; exit 1; }
(cd "$work/man-example" && PATH="$prefix/bin:$PATH" CPATH="$prefix/include" sh -e build.sh && CAPPROF_OUTPUT=app.capprof ./app >/dev/null) ||
  { echo "the manual page's example fails"; exit 1; }
check "$work/man-example/app.capprof"

# README: a CMake project without the package, flags passed on the command
# line; the compile flags alone would fail CMake's compiler check
mkdir -p "$work/readme-cmake"
cp "$src/tests/install/consumer/app.c" "$work/readme-cmake/app.c"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(readme C)\nadd_executable(app app.c)\n' \
  > "$work/readme-cmake/CMakeLists.txt"
grep -q 'CMAKE_EXE_LINKER_FLAGS="$(capprof ldflags)"' "$src/README.md" ||
  { echo "README.md does not say to pass capprof ldflags in CMAKE_EXE_LINKER_FLAGS"; exit 1; }
cmake -S "$work/readme-cmake" -B "$work/readme-cmake/b" -DCMAKE_C_COMPILER=gcc \
  -DCMAKE_C_FLAGS="$("$prefix/bin/capprof" cflags gcc) -I$prefix/include" \
  -DCMAKE_EXE_LINKER_FLAGS="$("$prefix/bin/capprof" ldflags)" > "$work/readme-cmake.log" 2>&1 &&
  cmake --build "$work/readme-cmake/b" >> "$work/readme-cmake.log" 2>&1 ||
  { echo "README's CMake recipe fails:"; tail -20 "$work/readme-cmake.log"; exit 1; }
(cd "$work" && CAPPROF_OUTPUT="$work/readme.capprof" "$work/readme-cmake/b/app" > /dev/null)
check "$work/readme.capprof"

# bash completion: commands, options, option values and dumps
cat > "$work/complete.sh" <<'SH'
. "$1"
cd "$2"
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _capprof; echo "${COMPREPLY[*]}"; }
[ "$(c capprof rep)" = report ] || { echo "commands: $(c capprof rep)"; exit 1; }
for o in --focus= --full-names; do
  case " $(c capprof tree --f) " in *" $o "*) ;; *) echo "tree options: $(c capprof tree --f)"; exit 1 ;; esac
done
[ "$(c capprof export --format=call)" = --format=callgrind ] || { echo "format values"; exit 1; }
case " $(c capprof report '') " in *" app_pc.capprof "*) ;; *) echo "dumps: $(c capprof report '')"; exit 1 ;; esac
SH
PATH="$prefix/bin:$PATH" bash "$work/complete.sh" "$prefix/share/bash-completion/completions/capprof" "$work" ||
  { echo "bash completion"; exit 1; }
echo "ok: installed library works with find_package (static, shared), pkg-config (shared, static);"
echo "ok: one version $v; man capprof renders every command and variable; bash completion"
