# capprof_instrument(<target> [SHARED]) -- compile <target> with the compiler's
# function hooks and link it with the capprof runtime (static by default).
# Used by capprof's own examples and installed with the CMake package.
#
# The hooks are chosen per language, from that language's compiler, as
# 'capprof cflags' chooses them (docs/runtime.md, "Compiler flags"):
#   Clang               -finstrument-functions-after-inlining
#   GCC >= 9, x86-64 Linux   -pg -mfentry -minstrument-return=call (hooks only
#                       in functions left after inlining; compile flags only,
#                       so gprof's start-up is not linked)
#   other GCC           -finstrument-functions, the C and C++ library headers
#                       excluded
#   MSVC                /Gh /GH

# capprof_hook_flags(<lang> <out-var>): the flags for language C or CXX.
function(capprof_hook_flags lang out)
  set(id "${CMAKE_${lang}_COMPILER_ID}")
  set(ver "${CMAKE_${lang}_COMPILER_VERSION}")
  if(MSVC)
    set(flags /Gh /GH)
  elseif(id MATCHES "Clang")
    # After inlining: inlined functions are not counted, as in an optimised build.
    set(flags -finstrument-functions-after-inlining)
  elseif(id STREQUAL "GNU" AND ver VERSION_GREATER_EQUAL 9
         AND CMAKE_SYSTEM_NAME STREQUAL "Linux"
         AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(flags -pg -mfentry -minstrument-return=call)
  else()
    set(flags -finstrument-functions
      "-finstrument-functions-exclude-file-list=/usr/include/,/include/c++/")
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# CAPPROF_HOOK_FLAGS: -finstrument-functions-style hooks for C, which
# capprof's own build uses where it needs those hooks in particular (the
# runtime's probe calibrator, unit tests, benchmarks of those hooks).
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT MSVC)
  set(CAPPROF_HOOK_FLAGS -finstrument-functions-after-inlining)
elseif(MSVC)
  set(CAPPROF_HOOK_FLAGS /Gh /GH)
else()
  set(CAPPROF_HOOK_FLAGS -finstrument-functions)
endif()

function(capprof_instrument target)
  cmake_parse_arguments(ARG "SHARED" "" "" ${ARGN})
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  foreach(lang IN ITEMS C CXX)
    if(lang IN_LIST langs)
      capprof_hook_flags(${lang} flags)
      target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:${lang}>:${flags}>")
    endif()
  endforeach()
  if(ARG_SHARED)
    target_link_libraries(${target} PRIVATE capprof::shared)
  else()
    target_link_libraries(${target} PRIVATE capprof::capprof)
  endif()
endfunction()
