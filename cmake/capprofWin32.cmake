# capprofWin32.cmake -- the Windows parts of the build, included by the top
# CMakeLists.txt when WIN32: the Win32 back end's sources, the /Gh /GH hooks
# (MASM x64 module, assembled by ml64 under MSVC and by llvm-ml -m64 when
# cross-compiling with MinGW; naked inline asm for MSVC x86), and the export
# list of capprof.dll.

set(CAPPROF_WIN_SOURCES src/win/os.c src/hooks/hooks_win.c src/dump/dumpsig_win.c
  src/sample/sample_win.c src/patch/patch_none.c)
set(CAPPROF_WIN_EXPORTS _penter _pexit __cyg_profile_func_enter __cyg_profile_func_exit)
if(MINGW)
  # -pg's call from main to _monstartup (src/hooks/gprof_win.c)
  list(APPEND CAPPROF_WIN_SOURCES src/hooks/gprof_win.c)
  list(APPEND CAPPROF_WIN_EXPORTS _monstartup)
endif()

# CAPPROF_WIN_HOOK_OBJECTS: what holds _penter/_pexit, added to both libraries.
set(CAPPROF_WIN_HOOK_OBJECTS)
if(CMAKE_SIZEOF_VOID_P EQUAL 8)
  list(APPEND CAPPROF_WIN_SOURCES src/hooks/frame_win_x64.c    # unwind data
    src/intercept/iat_win.c)                     # capprof run
  if(MSVC)
    enable_language(ASM_MASM)
    set(CAPPROF_WIN_HOOK_OBJECTS ${PROJECT_SOURCE_DIR}/asm/penter_x64.asm
      ${PROJECT_SOURCE_DIR}/asm/intercept_x64.asm)
  else()
    if(NOT CAPPROF_LLVM_ML)
      find_program(CAPPROF_LLVM_ML NAMES llvm-ml llvm-ml-16 llvm-ml-15 llvm-ml-14
        PATHS /usr/lib/llvm-16/bin /usr/lib/llvm-15/bin /usr/lib/llvm-14/bin)
    endif()
    if(NOT CAPPROF_LLVM_ML)
      message(FATAL_ERROR "llvm-ml is needed to assemble asm/penter_x64.asm (Debian: llvm)")
    endif()
    set(CAPPROF_WIN_HOOK_OBJECTS)
    foreach(name penter_x64 intercept_x64)
      set(obj ${PROJECT_BINARY_DIR}/${name}.obj)
      add_custom_command(OUTPUT ${obj}
        COMMAND ${CAPPROF_LLVM_ML} -m64 -c -Fo ${obj} ${PROJECT_SOURCE_DIR}/asm/${name}.asm
        DEPENDS ${PROJECT_SOURCE_DIR}/asm/${name}.asm
        COMMENT "llvm-ml -m64 asm/${name}.asm")
      set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
      list(APPEND CAPPROF_WIN_HOOK_OBJECTS ${obj})
    endforeach()
    # One rule, one target: both libraries wait for it instead of racing.
    add_custom_target(capprof_penter_obj DEPENDS ${CAPPROF_WIN_HOOK_OBJECTS})
  endif()
elseif(MSVC)
  list(APPEND CAPPROF_WIN_SOURCES src/hooks/hooks_win_x86.c    # naked inline asm
    src/intercept/iat_none.c)                                    # no capprof run on x86
else()
  list(APPEND CAPPROF_WIN_SOURCES src/intercept/iat_none.c)
  list(REMOVE_ITEM CAPPROF_WIN_EXPORTS _penter _pexit)     # no /Gh with GCC x86
endif()

# capprof.dll exports the public API (every CAPPROF_API function of the
# header) and the hooks, through a .def file: nothing else leaks out.
function(capprof_win_def_file out)
  file(READ ${PROJECT_SOURCE_DIR}/include/capprof/capprof.h hdr)
  string(REGEX MATCHALL "CAPPROF_API[^;(]*[ *](capprof_[a-z_0-9]+)[ ]*\\(" decls "${hdr}")
  set(names)
  foreach(d ${decls})
    string(REGEX REPLACE ".*[ *](capprof_[a-z_0-9]+)[ ]*\\($" "\\1" n "${d}")
    list(APPEND names ${n})
  endforeach()
  list(APPEND names ${CAPPROF_WIN_EXPORTS})
  list(REMOVE_DUPLICATES names)
  list(JOIN names "\n  " body)
  file(WRITE ${out}.in "LIBRARY capprof\nEXPORTS\n  ${body}\n")
  configure_file(${out}.in ${out} COPYONLY)
endfunction()
