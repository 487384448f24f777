# Project helpers shared by dnnc's CMake files.

# Adds a dnnc library built on MLIR. Own libraries are linked with
# `target_link_libraries`; upstream MLIR libraries through
# `mlir_target_link_libraries`, so that MLIR_LINK_MLIR_DYLIB=ON makes them all
# resolve to libMLIR.so.
#
#   add_dnnc_library(name SRC... DEPENDS tablegen-targets
#                    LINK_LIBS own-libs MLIR_LIBS upstream-libs)
function(add_dnnc_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_mlir_library(${name} ${ARG_UNPARSED_ARGUMENTS}
    DEPENDS ${ARG_DEPENDS}
    DISABLE_INSTALL
    EXCLUDE_FROM_LIBMLIR)
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  if(ARG_MLIR_LIBS)
    mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  endif()
endfunction()
