# capprof_instrument(<target> [SHARED]) -- compile <target> with the compiler's
# function hooks and link it with the capprof runtime (static by default).
# Used by capprof's own examples and installed with the CMake package.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT MSVC)
  # After inlining: inlined functions are not counted, as in an optimised build.
  set(CAPPROF_HOOK_FLAGS -finstrument-functions-after-inlining)
elseif(MSVC)
  set(CAPPROF_HOOK_FLAGS /Gh /GH)
else()
  set(CAPPROF_HOOK_FLAGS -finstrument-functions)
endif()

function(capprof_instrument target)
  cmake_parse_arguments(ARG "SHARED" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE ${CAPPROF_HOOK_FLAGS})
  if(ARG_SHARED)
    target_link_libraries(${target} PRIVATE capprof::shared)
  else()
    target_link_libraries(${target} PRIVATE capprof::capprof)
  endif()
endfunction()
