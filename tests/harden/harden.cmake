# Runtime hardening tests (issue 11), tests/harden/: exits from signal
# handlers, setuid programs, static programs, thread churn, the node cap and
# dump-file failures. Included from tests/CMakeLists.txt.
set(HARDEN_TESTS ${CMAKE_CURRENT_LIST_DIR})
find_program(CAPPROF_GCC_H gcc)

add_test(NAME harden.signal_exit_never_hangs
  COMMAND sh ${HARDEN_TESTS}/signal_exit.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
          ${CAPPROF_GCC_H})

add_test(NAME harden.setuid_ignores_environment
  COMMAND sh ${HARDEN_TESTS}/setuid.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CAPPROF_GCC_H})
set_tests_properties(harden.setuid_ignores_environment PROPERTIES SKIP_RETURN_CODE 77)

add_test(NAME harden.dump_files
  COMMAND sh ${HARDEN_TESTS}/dumpfiles.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CAPPROF_GCC_H})

add_test(NAME harden.thread_churn
  COMMAND sh ${HARDEN_TESTS}/churn.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CAPPROF_GCC_H})

find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND AND TARGET capprof_tool)
  add_test(NAME harden.big_counts_never_wrap
    COMMAND ${Python3_EXECUTABLE} ${HARDEN_TESTS}/bigcounts.py $<TARGET_FILE:capprof_tool>
            $<TARGET_FILE:tool_gen_dump> ${CMAKE_CURRENT_BINARY_DIR}/harden-work/bigcounts)
endif()

# Issue 33: the default never changes or kills its host (tests/harden/host.sh).
foreach(case protect mprotect_race wx_filter tsync_filter perf_filter cancel quick_exit stderr_file emfile export_self strict)
  add_test(NAME harden.host.${case}
    COMMAND sh ${HARDEN_TESTS}/host.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(harden.host.${case} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# The hostile-program campaign at CI size (one run of each build); the bench
# runs it with --full.
add_test(NAME harden.campaign
  COMMAND sh ${HARDEN_TESTS}/campaign.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(harden.campaign PROPERTIES SKIP_RETURN_CODE 77)
