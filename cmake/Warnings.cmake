# Warnings on for every dlscale target; -march=native when DLS_NATIVE is on. DLS_ARCH_FLAGS is
# recorded in provenance.
add_library(dls_warnings INTERFACE)
target_compile_options(dls_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference>)
# -fno-math-errno: nothing reads errno, and without it every std::sqrt carries a scalar
# error-path check that stops the loop around it from vectorising. Results stay IEEE.
set(DLS_ARCH_FLAGS "-fno-math-errno")
if(DLS_NATIVE)
  set(DLS_ARCH_FLAGS "${DLS_ARCH_FLAGS} -march=native")
endif()
separate_arguments(_dls_arch_list UNIX_COMMAND "${DLS_ARCH_FLAGS}")
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_dls_arch_list}>")
