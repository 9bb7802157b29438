#!/bin/sh
# run.sh BUILD SRC -- install capprof into a temporary prefix, then build a
# separate program against it with find_package (static and shared) and with
# pkg-config, run each, and read the dumps with the installed capprof tool.
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
echo "ok: installed library works with find_package (static, shared) and pkg-config"
