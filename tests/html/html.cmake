# The HTML page in a real browser (tests/html/): test_page.py drives headless
# Chromium through the DevTools protocol (cdp.py, Python's standard library
# only) over the bundled example's report and a diff page. Registered even
# without Chromium, failing: a missing browser must not drop the test
# unnoticed. Included from tests/CMakeLists.txt.
if(NOT TARGET capprof_tool OR NOT CAPPROF_BUILD_EXAMPLES)
  return()
endif()
find_program(CAPPROF_PYTHON3 NAMES python3 python)
find_program(CAPPROF_CHROMIUM NAMES chromium chromium-browser google-chrome)
if(NOT CAPPROF_CHROMIUM)
  message(STATUS "capprof: chromium is missing (.ci/deps installs it); the html_page test will fail")
endif()
add_test(NAME html_page
  COMMAND ${CAPPROF_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_page.py $<TARGET_FILE:capprof_tool>
          $<TARGET_FILE:calls> ${CMAKE_CURRENT_BINARY_DIR}/html_page $<TARGET_FILE:tool_gen_dump>)
set_tests_properties(html_page PROPERTIES TIMEOUT 180)
