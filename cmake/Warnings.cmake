# Warnings on for every dlscale target; -march=native when DLS_NATIVE is on (recorded in provenance).
add_library(dls_warnings INTERFACE)
target_compile_options(dls_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference>)
set(DLS_ARCH_FLAGS "")
if(DLS_NATIVE)
  set(DLS_ARCH_FLAGS "-march=native")
endif()
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:${DLS_ARCH_FLAGS}>)
