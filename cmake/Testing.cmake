# dls_add_gtest(NAME SOURCES ... LABELS ... LIBS ...): one GoogleTest binary as one CTest test.
function(dls_add_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest_main dls_warnings)
  target_compile_definitions(${name} PRIVATE DLS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  # OMP_WAIT_POLICY=passive: two tests at once on two cores, each with two threads, must not
  # spin against each other (a test is no timing; benchmarks keep the default policy)
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${DLS_TEST_TIMEOUT}
                       ENVIRONMENT "OMP_NUM_THREADS=2;OPENBLAS_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
endfunction()
