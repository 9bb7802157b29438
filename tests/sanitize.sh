#!/bin/sh
# sanitize.sh BUILD SRC -- the unit, end-to-end and tool tests again, in a
# second build tree (BUILD/sanitize) configured with CAPPROF_SANITIZE=ON:
# AddressSanitizer and UndefinedBehaviorSanitizer, any report fails the test.
# Left out: fully static programs (ASan needs the dynamic loader), Clang-
# built e2e programs (another sanitizer runtime), benchmarks, slow tests, and
# the two e2e programs that check capprof's longjmp interposer (ASan's own
# longjmp interceptor is linked before libcapprof.a, so the interposer is
# not used in a sanitized program: docs/runtime.md), and the exit()-from-a-
# signal-handler test (the handler may interrupt ASan's own allocator, whose
# lock LeakSanitizer then waits for at exit: seen, outside capprof), and
# tool_e2e (a check of its output for "\.0 " can match a time; slower
# sanitized runs made it fail once).
set -eu
build=$1 src=$2
san=$build/sanitize
cmake -S "$src" -B "$san" -DCAPPROF_SANITIZE=ON -DCAPPROF_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
nice cmake --build "$san" -j2 >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
nice ctest --test-dir "$san" -j2 --output-on-failure \
  -R '^(unit\.|e2e\..*\.gcc\.(static|shared)|e2e\.throttle|tool_profile|tool_symbols|tool_golden|zones\.runs|harden\.dump_files)' \
  -E 'fullstatic|sanitize|e2e\.(longjmp|zones_nested)\.'
