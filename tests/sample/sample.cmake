# Sampling tests (tests/sample/run.sh): CPU-time samples of programs with and
# without hooks, threads, fork, signals, an unavailable hardware source,
# unhooking (GCC's after-inlining hooks patched out), the default sampling
# through a ring buffer, its fallback the CPU-time timer (where perf is refused),
# the program taking the timer's signal, the EINTR rate.
foreach(case ratio ratio_timer waiter_worker threads8 fork signals hw_unavailable selfprofile
    existing threads8_hooked probe prologue unhook unhook_edges default paths unhook_split timer
    sigreset eintr)
  add_test(NAME sample.${case}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sample/run.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${case})
endforeach()
set_tests_properties(sample.paths sample.unhook_split PROPERTIES SKIP_RETURN_CODE 77)
