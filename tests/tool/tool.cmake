# Tests of the capprof tool (tests/tool/): the model's CMocka suite, the
# end-to-end script with golden tree, exports, merge/diff and bad input, call
# counts against valgrind's callgrind, million-node performance, and the
# dump reader's libFuzzer target. Included from tests/CMakeLists.txt.
set(TOOL_TESTS ${CMAKE_CURRENT_LIST_DIR})
if(NOT TARGET capprof_tool)
  return()                       # CAPPROF_BUILD_TOOL=OFF
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CMOCKA IMPORTED_TARGET cmocka)
endif()
if(CMOCKA_FOUND)
  add_executable(test_tool_profile ${TOOL_TESTS}/test_profile.c)
  target_link_libraries(test_tool_profile PRIVATE capprof_model PkgConfig::CMOCKA)
  add_test(NAME tool_profile COMMAND test_tool_profile)
  if(LIBDW_FOUND)
    add_executable(test_tool_symbols ${TOOL_TESTS}/test_symbols.c)
    target_link_libraries(test_tool_symbols PRIVATE capprof_model PkgConfig::CMOCKA)
    target_compile_options(test_tool_symbols PRIVATE -g -O1)
    add_test(NAME tool_symbols COMMAND test_tool_symbols)
  endif()
endif()

add_executable(tool_gen_dump ${TOOL_TESTS}/gen_dump.c)
target_link_libraries(tool_gen_dump PRIVATE capprof_model)

add_test(NAME tool_e2e COMMAND sh ${TOOL_TESTS}/e2e.sh $<TARGET_FILE:capprof_tool>
  "${CMAKE_C_COMPILER}${CAPPROF_SANITIZE_CC_SUFFIX}" $<TARGET_FILE:capprof> ${CMAKE_CURRENT_BINARY_DIR}/tool_e2e
  $<TARGET_FILE:tool_gen_dump>)

add_test(NAME tool_ui COMMAND sh ${TOOL_TESTS}/ui.sh $<TARGET_FILE:capprof_tool>
  ${CMAKE_C_COMPILER} ${CMAKE_CXX_COMPILER} $<TARGET_FILE:capprof>
  ${CMAKE_CURRENT_BINARY_DIR}/tool_ui)

# Every view of one sampled run (default settings) against report's shares,
# and report on a C++ dump fitted to 80 columns (views.py; skips, exit 77,
# where nothing can sample).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND CMAKE_CXX_COMPILER AND NOT WIN32)
  add_test(NAME tool_views COMMAND ${Python3_EXECUTABLE} ${TOOL_TESTS}/views.py
    $<TARGET_FILE:capprof_tool> ${CMAKE_CXX_COMPILER} $<TARGET_FILE:capprof>
    ${CMAKE_CURRENT_BINARY_DIR}/tool_views)
  set_tests_properties(tool_views PROPERTIES SKIP_RETURN_CODE 77)
endif()

# The pprof export read back by 'go tool pprof' (Debian golang-go): skipped
# (exit 77) only when go is absent.
add_test(NAME tool_pprof COMMAND sh ${TOOL_TESTS}/pprof.sh $<TARGET_FILE:capprof_tool>
  ${CMAKE_C_COMPILER} $<TARGET_FILE:capprof> ${CMAKE_CURRENT_BINARY_DIR}/tool_pprof)
set_tests_properties(tool_pprof PROPERTIES SKIP_RETURN_CODE 77)

# The command line against its option tables: completion, --help, the man
# page, --width N, unknown options.
add_test(NAME tool_options COMMAND sh ${TOOL_TESTS}/options.sh $<TARGET_FILE:capprof_tool>
  $<TARGET_FILE:tool_gen_dump> ${CMAKE_CURRENT_BINARY_DIR}/tool_options ${PROJECT_SOURCE_DIR})

add_test(NAME tool_probe_note COMMAND sh ${TOOL_TESTS}/probe_note.sh $<TARGET_FILE:capprof_tool>
  $<TARGET_FILE:tool_gen_dump> ${CMAKE_CURRENT_BINARY_DIR}/tool_probe_note)

add_test(NAME tool_perf COMMAND sh ${TOOL_TESTS}/perf.sh $<TARGET_FILE:capprof_tool>
  $<TARGET_FILE:tool_gen_dump> ${CMAKE_CURRENT_BINARY_DIR}/tool_perf)
set_tests_properties(tool_perf PROPERTIES RUN_SERIAL TRUE)

find_program(CAPPROF_CLANG NAMES clang clang-14)
find_program(CAPPROF_VALGRIND valgrind)
if(CAPPROF_CLANG AND CAPPROF_VALGRIND)
  add_test(NAME tool_vs_callgrind COMMAND sh ${TOOL_TESTS}/vs_callgrind.sh
    $<TARGET_FILE:capprof_tool> ${CAPPROF_CLANG} $<TARGET_FILE:capprof>
    ${CMAKE_CURRENT_BINARY_DIR}/tool_vs_callgrind)
endif()
if(CAPPROF_CLANG)
  add_test(NAME tool_clang_lines COMMAND sh ${TOOL_TESTS}/clang_lines.sh
    $<TARGET_FILE:capprof_tool> ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
endif()

# The fuzzer needs clang's libFuzzer, whatever compiler builds the rest: it
# is compiled by a custom command so a GCC build can still run it.
if(CAPPROF_CLANG)
  option(CAPPROF_FUZZ "Build and run the dump reader's libFuzzer target (clang)" ON)
else()
  set(CAPPROF_FUZZ OFF)
endif()
if(CAPPROF_FUZZ)
  set(fuzz_srcs ${TOOL_TESTS}/fuzz_dumpread.c ${PROJECT_SOURCE_DIR}/tools/model/cpd_reader.c
    ${PROJECT_SOURCE_DIR}/tools/model/profile.c ${PROJECT_SOURCE_DIR}/tools/sym/symbols.c
    ${PROJECT_SOURCE_DIR}/tools/sym/sym_none.c ${PROJECT_SOURCE_DIR}/tools/model/tool.c)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fuzz_dumpread
    COMMAND ${CAPPROF_CLANG} -g -O1 -fsanitize=fuzzer,address,undefined
      -fno-sanitize-recover=undefined -I${PROJECT_SOURCE_DIR}/include
      -I${PROJECT_SOURCE_DIR}/tools ${fuzz_srcs} -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_dumpread
    DEPENDS ${fuzz_srcs} ${PROJECT_SOURCE_DIR}/tools/model/cpd_reader.h ${PROJECT_SOURCE_DIR}/src/dumpfmt.h
    COMMENT "Building the dump reader's fuzzer with clang")
  add_custom_target(fuzz_dumpread ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_dumpread)
  # Seed corpus: small valid dumps from gen_dump, made at test time; then a
  # bounded run (CAPPROF_FUZZ_SECONDS, default 60), then the real tool over
  # every input the fuzzer kept.
  set(CAPPROF_FUZZ_SECONDS 60 CACHE STRING "Seconds the fuzz test runs")
  add_test(NAME tool_fuzz_dumpread COMMAND sh ${TOOL_TESTS}/fuzz.sh
    ${CMAKE_CURRENT_BINARY_DIR}/fuzz_dumpread $<TARGET_FILE:tool_gen_dump>
    $<TARGET_FILE:capprof_tool> ${CAPPROF_FUZZ_SECONDS}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endif()

# Golden tests on the bundled examples: the symbolized tree (and flat
# profile) with times masked. Regenerate with CAPPROF_UPDATE_GOLDEN=1 ctest.
if(CAPPROF_BUILD_EXAMPLES)
  # The golden files test the tool, so their programs are built with the
  # -finstrument-functions hooks (CAPPROF_HOOK_FLAGS), whose trees do not
  # depend on what the compiler inlines (sanitizers, versions), not with
  # capprof_instrument()'s after-inlining modes.
  add_executable(golden_calls ${PROJECT_SOURCE_DIR}/examples/calls.c)
  target_compile_options(golden_calls PRIVATE ${CAPPROF_HOOK_FLAGS})
  target_link_libraries(golden_calls PRIVATE capprof)
  add_executable(golden_threads ${PROJECT_SOURCE_DIR}/examples/threads.cpp)
  target_compile_options(golden_threads PRIVATE ${CAPPROF_HOOK_FLAGS})
  target_link_libraries(golden_threads PRIVATE capprof Threads::Threads)
  # The same names as the examples: the thread names are the program's.
  set_target_properties(golden_calls PROPERTIES OUTPUT_NAME calls
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/golden-bin)
  set_target_properties(golden_threads PROPERTIES OUTPUT_NAME threads
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/golden-bin)
  add_test(NAME tool_golden.calls.tree COMMAND sh ${TOOL_TESTS}/golden.sh
    $<TARGET_FILE:capprof_tool> ${CMAKE_CURRENT_BINARY_DIR}/golden_calls_tree
    ${TOOL_TESTS}/golden/calls.tree $<TARGET_FILE:golden_calls> 3 -- tree --sort=name)
  add_test(NAME tool_golden.calls.report COMMAND sh ${TOOL_TESTS}/golden.sh
    $<TARGET_FILE:capprof_tool> ${CMAKE_CURRENT_BINARY_DIR}/golden_calls_report
    ${TOOL_TESTS}/golden/calls.report $<TARGET_FILE:golden_calls> 3 -- report --sort=name)
  add_test(NAME tool_golden.threads.tree COMMAND sh ${TOOL_TESTS}/golden.sh
    $<TARGET_FILE:capprof_tool> ${CMAKE_CURRENT_BINARY_DIR}/golden_threads_tree
    ${TOOL_TESTS}/golden/threads.tree $<TARGET_FILE:golden_threads> --
    tree --merge-threads --sort=name --depth 3)
endif()
