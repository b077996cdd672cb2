# Regenerates build/git_info.cpp on every build (commit, dirty flag), rewriting it only when it
# changes, so provenance never carries a stale commit and unchanged builds stay incremental.
set(DLS_GIT_INFO_CPP ${CMAKE_BINARY_DIR}/generated/git_info.cpp)
add_custom_target(dls_git_info ALL
  COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_SOURCE_DIR} -DOUT=${DLS_GIT_INFO_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/write_git_info.cmake
  BYPRODUCTS ${DLS_GIT_INFO_CPP}
  COMMENT "git commit for provenance")
