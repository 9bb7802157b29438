# Tests of zones (tests/zones/): statistics across runs on dumps with known
# values, disabled builds referencing no capprof symbol (nm), and the
# zones-only example over five runs (report, info, CSV, diff, output
# directory). Included from tests/CMakeLists.txt; the e2e zone programs are
# in tests/e2e (zones_*), the runtime API suite is tests/unit/test_zones.c.
set(ZONE_TESTS ${CMAKE_CURRENT_LIST_DIR})

add_executable(test_zone_runs ${ZONE_TESTS}/test_runs.c)
target_include_directories(test_zone_runs PRIVATE ${CMOCKA_INCLUDE_DIR})
target_link_libraries(test_zone_runs PRIVATE capprof_model ${CMOCKA_LIBRARY})
target_compile_options(test_zone_runs PRIVATE ${CAPPROF_WARNINGS})
add_test(NAME zones.runs_statistics COMMAND test_zone_runs)

# The same sources without and with CAPPROF_ENABLED; nm must find no capprof
# symbol in the first and some in the second (the control).
foreach(src disabled.c disabled.cpp)
  string(REPLACE "." "_" base ${src})
  add_library(zones_${base}_off OBJECT ${ZONE_TESTS}/${src})
  add_library(zones_${base}_on OBJECT ${ZONE_TESTS}/${src})
  target_compile_definitions(zones_${base}_on PRIVATE CAPPROF_ENABLED)
  foreach(lib zones_${base}_off zones_${base}_on)
    target_include_directories(${lib} PRIVATE ${PROJECT_SOURCE_DIR}/include)
    target_compile_options(${lib} PRIVATE ${CAPPROF_WARNINGS} -O0)
  endforeach()
  add_test(NAME zones.disabled_build_references_nothing.${base}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DOBJ=$<TARGET_OBJECTS:zones_${base}_off>
            -DEXPECT=none -P ${ZONE_TESTS}/check_nm.cmake)
  add_test(NAME zones.enabled_build_references_capprof.${base}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DOBJ=$<TARGET_OBJECTS:zones_${base}_on>
            -DEXPECT=some -P ${ZONE_TESTS}/check_nm.cmake)
endforeach()

if(CAPPROF_BUILD_TOOL AND CAPPROF_BUILD_EXAMPLES)
  add_test(NAME zones.five_runs_example
    COMMAND sh ${ZONE_TESTS}/runs.sh $<TARGET_FILE:capprof_tool> $<TARGET_FILE:zones>
            ${CMAKE_C_COMPILER} $<TARGET_FILE:capprof> ${PROJECT_SOURCE_DIR}/include
            ${CMAKE_CURRENT_BINARY_DIR}/zones_runs)
endif()

if(CAPPROF_BUILD_TOOL)
  add_test(NAME zones.runs_known_values_cli
    COMMAND sh ${ZONE_TESTS}/runs_cli.sh $<TARGET_FILE:capprof_tool>
            $<TARGET_FILE:test_zone_runs> ${CMAKE_CURRENT_BINARY_DIR}/zones_runs_cli)
endif()
