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
         lib/cmake/capprof/capprofConfig.cmake lib/pkgconfig/capprof.pc; do
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
