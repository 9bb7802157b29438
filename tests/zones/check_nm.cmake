# check_nm.cmake -- cmake -DNM=nm -DOBJ=file.o -DEXPECT=none|some -P check_nm.cmake
# Fails unless the object's undefined symbols (nm -u: what it references)
# mention capprof as EXPECT says: 'none' for a build without CAPPROF_ENABLED,
# 'some' for the control.
execute_process(COMMAND ${NM} -u ${OBJ} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm ${OBJ} failed: ${err}")
endif()
string(REGEX MATCHALL "[^\n]*capprof[^\n]*" hits "${out}")
if(EXPECT STREQUAL "none" AND hits)
  message(FATAL_ERROR "${OBJ} references capprof symbols:\n${hits}")
elseif(EXPECT STREQUAL "some" AND NOT hits)
  message(FATAL_ERROR "${OBJ} references no capprof symbol; the check would prove nothing")
endif()
message(STATUS "${OBJ}: ${EXPECT}: ok")
