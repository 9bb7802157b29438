# toolchain-mingw64.cmake -- cross-compile capprof for Windows x64 with
# MinGW-w64 GCC (Debian package mingw-w64) on Linux:
#   cmake -S . -B build-win64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw64.cmake
# The MASM hook module (asm/penter_x64.asm) is assembled with llvm-ml -m64,
# the same source MSVC's ml64 assembles; CAPPROF_LLVM_ML names it. Programs are
# linked -static so that they run under wine without MinGW's DLLs on the path.
set(CMAKE_SYSTEM_NAME Windows)
set(CAPPROF_MINGW_PREFIX x86_64-w64-mingw32 CACHE STRING "MinGW-w64 triplet")
if(CAPPROF_MINGW_PREFIX MATCHES "^i686")
  set(CMAKE_SYSTEM_PROCESSOR X86)
else()
  set(CMAKE_SYSTEM_PROCESSOR AMD64)
endif()
# The posix thread model: std::thread (examples/threads.cpp) needs it. The
# runtime itself uses the Win32 API only; -static keeps winpthread,
# libgcc and libstdc++ inside the programs.
set(CMAKE_C_COMPILER ${CAPPROF_MINGW_PREFIX}-gcc-posix)
set(CMAKE_CXX_COMPILER ${CAPPROF_MINGW_PREFIX}-g++-posix)
set(CMAKE_RC_COMPILER ${CAPPROF_MINGW_PREFIX}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${CAPPROF_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(CAPPROF_LLVM_ML NAMES llvm-ml llvm-ml-16 llvm-ml-15 llvm-ml-14
  PATHS /usr/lib/llvm-16/bin /usr/lib/llvm-15/bin /usr/lib/llvm-14/bin)

# DWARF 4: the newest version Wine's dbghelp reads (GCC 12 defaults to 5).
set(CMAKE_C_FLAGS_INIT "-gdwarf-4")
set(CMAKE_CXX_FLAGS_INIT "-gdwarf-4")

# A CodeView (RSDS) record with a GUID in every image, as MSVC's /DEBUG
# writes, so that the module map carries a PDB GUID and age.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -Wl,--build-id")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static -Wl,--build-id")

# Tests built here run under wine.
find_program(CAPPROF_WINE NAMES wine64 wine)
if(CAPPROF_WINE)
  # Through a wrapper that relaunches a program wine failed to start.
  set(CMAKE_CROSSCOMPILING_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/wine-emulator.sh ${CAPPROF_WINE})
endif()
