# The HTML page in real browsers (tests/html/): test_page.py drives headless
# Chromium through the DevTools protocol (cdp.py, Python's standard library
# only) over the bundled example's report and a diff page; test_firefox.py
# has headless Firefox draw the report. Registered even without the
# browsers, failing: a missing browser must not drop a test unnoticed.
# Included from tests/CMakeLists.txt.
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
          $<TARGET_FILE:golden_calls> ${CMAKE_CURRENT_BINARY_DIR}/html_page $<TARGET_FILE:tool_gen_dump>)
set_tests_properties(html_page PROPERTIES TIMEOUT 180)

# The same page in Firefox (headless screenshot, its pixels checked).
find_program(CAPPROF_FIREFOX NAMES firefox-esr firefox)
if(NOT CAPPROF_FIREFOX)
  message(STATUS "capprof: firefox-esr is missing (.ci/deps installs it); the html_firefox test will fail")
endif()
add_test(NAME html_firefox
  COMMAND ${CAPPROF_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/test_firefox.py $<TARGET_FILE:capprof_tool>
          $<TARGET_FILE:golden_calls> ${CMAKE_CURRENT_BINARY_DIR}/html_firefox)
set_tests_properties(html_firefox PROPERTIES TIMEOUT 180)
