// Underflow control: with ftz a product below FLT_MIN is 0 on the calling thread and on every
// OpenMP thread; with keep it is the denormal; the mode reads back as set.
#include "measure/denormals.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cfloat>
#include <vector>

namespace dls {
namespace {

// volatile: the products are computed at run time, under the thread's mode
float product(float a, float b) {
  volatile float x = a, y = b;
  return x * y;
}

// Each OpenMP thread's product of two normals whose exact product is FLT_MIN / 4.
std::vector<float> team_products() {
  std::vector<float> out(std::size_t(omp_get_max_threads()), -1.0f);
#pragma omp parallel
  out[std::size_t(omp_get_thread_num())] = product(FLT_MIN, 0.25f);
  return out;
}

TEST(Denormals, FtzFlushesOnEveryThreadAndKeepRestores) {
  omp_set_num_threads(2);
  set_denormals(Denormals::kFtz);
  EXPECT_EQ(denormals_now(), Denormals::kFtz);
  EXPECT_EQ(product(FLT_MIN, 0.25f), 0.0f);
  for (float v : team_products()) EXPECT_EQ(v, 0.0f);
  set_denormals(Denormals::kKeep);
  EXPECT_EQ(denormals_now(), Denormals::kKeep);
  EXPECT_EQ(product(FLT_MIN, 0.25f), FLT_MIN / 4);
  for (float v : team_products()) EXPECT_EQ(v, FLT_MIN / 4);
}

}  // namespace
}  // namespace dls
