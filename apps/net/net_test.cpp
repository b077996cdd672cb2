// The graph's branches and joins: a tensor read by several layers, and by one layer twice,
// receives the sum of their gradients. Checked by finite differences in double on every
// parameter of a small branching net, and the float net against the double one. Also the memory
// the net keeps: fan-out scratch only where used, an external input, workspace_bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "apps/models/model.hpp"
#include "apps/net/memory_plan.hpp"
#include "apps/net/ref_path.hpp"
#include "kernels/common/fd_grad.hpp"
#include "kernels/common/rng.hpp"
#include "measure/check.hpp"
#include "measure/huge_pages.hpp"

namespace dls {
namespace {

template <class T>
std::unique_ptr<Net<T>> branching() {
  auto n = std::make_unique<Net<T>>("branching", Dims{2, 3, 6, 6});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1};
  conv(*n, "conv1", c3);
  const std::string t =
      n->add(std::make_unique<ActLayer<T>>("t", Act::kTanh));  // read by conv2 and conv3
  conv(*n, "b", c3, {t});
  conv(*n, "c", c3, {t});
  n->add(std::make_unique<AddLayer<T>>("s"), {"b", "c"});
  n->add(std::make_unique<ConcatLayer<T>>("k"), {"s", "b"});  // b read again
  n->add(std::make_unique<AddLayer<T>>("kk"), {"k", "k"});    // one layer reads k twice
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  return n;
}

template <class T>
void prepare(Net<T>& n, std::vector<int>& labels) {
  n.allocate(1);
  for (std::size_t i = 0; i < n.weights().size(); ++i)
    n.weights()[i] = T(rng_uniform(2, i, -0.5f, 0.5f));
  for (long i = 0; i < n.input_dims().count(); ++i)
    n.input()[i] = T(rng_uniform(3, std::uint64_t(i), -1, 1));
  labels = {1, 2};
}

// One step of a double net on the reference kernels (dead buffers poisoned), its gradient of
// every parameter checked against central differences of the forward; returns the gradients.
std::vector<double> step_checked_by_fd(Net<double>& net, const std::vector<int>& labels) {
  net.set_poison_dead(true);
  const Context ctx{.backend = Backend::kRef, .train = true, .labels = labels.data(), .seed = 1};
  net.zero_grad();
  net.forward(ctx);
  net.backward(ctx);
  const std::vector<double> ana = net.grads();
  int failed = 0;
  for (const ParamBlob& b : net.blobs())
    for (long i = b.offset; i < b.offset + b.count; ++i) {
      const double a = ana[std::size_t(i)];
      const FdPoint fd = fd_central(
          net.weights()[std::size_t(i)], a, [&] { return net.forward(ctx); }, 1e-6);
      if (!fd.ok(a, 1e-6) && failed++ == 0)
        ADD_FAILURE() << b.layer << "/" << b.name << "[" << i - b.offset << "]: numeric " << fd.num
                      << " analytic " << a;
    }
  EXPECT_EQ(failed, 0) << "of " << ana.size();
  return ana;
}

TEST(Net, FanOutGradientsAreSummed) {
  auto net = branching<double>();
  std::vector<int> labels;
  prepare(*net, labels);
  // tanh and average pooling: no kinks, every coordinate counts
  const std::vector<double> ana = step_checked_by_fd(*net, labels);
  EXPECT_GT(net->parameters(), 400);

  // the float net on the CPU kernels agrees with the double one
  auto f = branching<float>();
  prepare(*f, labels);
  const Context fctx{
      .backend = Backend::kOpenBlas, .train = true, .labels = labels.data(), .seed = 1};
  f->zero_grad();
  f->forward(fctx);
  f->backward(fctx);
  double m = 0, d = 0;
  for (std::size_t i = 0; i < ana.size(); ++i)
    m = std::max(m, std::fabs(ana[i])), d = std::max(d, std::fabs(ana[i] - f->grads()[i]));
  EXPECT_LT(d / m, 1e-5);
}

// A residual block: ReLUs after a batch norm and after the join are fused, and the join into
// the batch norm before it (with the join's ReLU); the ReLU after a convolution (which cannot
// apply it), the one whose input has two readers, and that second join (bn3 read twice) are not.
template <class T>
std::unique_ptr<Net<T>> residual(bool fuse) {
  auto n = std::make_unique<Net<T>>("residual", Dims{3, 4, 6, 6});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1, .bias = false};
  conv(*n, "conv0", c3);
  const std::string x = relu(*n, "relu0");  // after a conv: not fused
  conv(*n, "conv1", c3, {x});
  bnorm(*n, "bn1");
  relu(*n, "relu1");  // fused into bn1
  conv(*n, "conv2", c3);
  const std::string b2 = bnorm(*n, "bn2");
  sum(*n, "add", {b2, x});
  const std::string r = relu(*n, "relu2");  // fused into add
  conv(*n, "conv3", c3, {r});
  const std::string b3 = bnorm(*n, "bn3");
  relu(*n, "relu3", {b3});  // bn3 is read twice: not fused
  sum(*n, "add2", {"relu3", b3});
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  n->set_fusion(fuse);
  return n;
}

template <class T>
std::vector<T> step_grads(Net<T>& n, Backend b, double& loss) {
  std::vector<int> labels;
  prepare(n, labels);
  labels.push_back(0);
  n.set_poison_dead(true);  // a fused layer reading memory the plan gave away shows as NaN
  const Context ctx{.backend = b, .train = true, .labels = labels.data(), .seed = 1};
  n.zero_grad();
  loss = n.forward(ctx);
  n.backward(ctx);
  return n.grads();
}

TEST(Net, FusedReluGivesTheSameStep) {
  auto fused = residual<float>(true);
  auto plain = residual<float>(false);
  std::vector<int> labels;
  prepare(*fused, labels);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < fused->size(); ++i)
    if (fused->fused(i)) names.push_back(fused->layer_name(i));
  EXPECT_EQ(names, (std::vector<std::string>{"relu1", "add", "relu2"}));
  EXPECT_EQ(fused->inputs_of("bn2"), (std::vector<std::string>{"conv2", "relu0"}));
  EXPECT_EQ(plain->inputs_of("bn2"), (std::vector<std::string>{"conv2"}));
  // the same step in double (reference kernels) and in float (CPU kernels), fused and not
  double lf = 0, lp = 0;
  const auto gf = step_grads(*residual<double>(true), Backend::kRef, lf);
  const auto gp = step_grads(*residual<double>(false), Backend::kRef, lp);
  EXPECT_NEAR(lf, lp, 1e-12 * std::fabs(lp));
  double m = 0, d = 0;
  for (std::size_t i = 0; i < gp.size(); ++i)
    m = std::max(m, std::fabs(gp[i])), d = std::max(d, std::fabs(gf[i] - gp[i]));
  EXPECT_LT(d, 1e-12 * m) << "double";
  EXPECT_GT(m, 0.0);
  const auto ff = step_grads(*residual<float>(true), Backend::kOpenBlas, lf);
  const auto fp = step_grads(*residual<float>(false), Backend::kOpenBlas, lp);
  EXPECT_NEAR(lf, lp, 1e-6 * std::fabs(lp));
  d = 0;
  for (std::size_t i = 0; i < gp.size(); ++i) d = std::max(d, double(std::fabs(ff[i] - fp[i])));
  EXPECT_LT(d, 1e-6 * m) << "float";
  EXPECT_THROW(fused->set_fusion(false), Error);  // after allocate()
}

// A projection block's join: both addends are batch norms read by nothing else, and the join
// goes into the later one (its other addend is ready when it runs), without a ReLU here (tanh
// after it: no kinks for the finite differences). The fused step's gradients are those of the
// forward by finite differences in double, on every parameter; in float, the fused and the plain
// nets take the same step bit for bit (the join's kernels round as the batch norm and the add).
template <class T>
std::unique_ptr<Net<T>> projection(bool fuse) {
  auto n = std::make_unique<Net<T>>("projection", Dims{3, 3, 4, 4});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1, .bias = false};
  conv(*n, "conv0", c3);
  const std::string x = n->add(std::make_unique<ActLayer<T>>("t0", Act::kTanh));
  conv(*n, "conv1", c3, {x});
  const std::string a = bnorm(*n, "bn1");
  conv(*n, "conv2", {.out = 4, .kernel = 1, .bias = false}, {x});
  const std::string b = bnorm(*n, "bn2");
  sum(*n, "add", {a, b});
  n->add(std::make_unique<ActLayer<T>>("t1", Act::kTanh));
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  n->set_fusion(fuse);
  return n;
}

TEST(Net, FusedJoinIsTheGradientAndTheSameStep) {
  auto net = projection<double>(true);
  std::vector<int> labels;
  prepare(*net, labels);
  labels.push_back(0);
  EXPECT_EQ(net->layer_name(6), "add");
  EXPECT_TRUE(net->fused(6));
  EXPECT_EQ(net->inputs_of("bn2"), (std::vector<std::string>{"conv2", "bn1"}));
  EXPECT_EQ(net->inputs_of("bn1"), (std::vector<std::string>{"conv1"}));
  const std::vector<double> ana = step_checked_by_fd(*net, labels);
  double lf = 0, lp = 0;
  const auto ff = step_grads(*projection<float>(true), Backend::kOpenBlas, lf);
  const auto fp = step_grads(*projection<float>(false), Backend::kOpenBlas, lp);
  EXPECT_EQ(lf, lp);
  EXPECT_EQ(ff, fp);
  double m = 0, d = 0;  // and the float step is the double one
  for (std::size_t i = 0; i < ana.size(); ++i)
    m = std::max(m, std::fabs(ana[i])), d = std::max(d, std::fabs(ana[i] - ff[i]));
  EXPECT_LT(d / m, 1e-5);
}

// Every kind of parameter (convolution, transposed convolution and fully connected weights and
// biases, batch norm's scale and shift) and a convolution no gradient reaches (its output read by
// nothing): a backward with Context::overwrite_grads writes every parameter gradient, over
// whatever the buffer held (NaN here), exactly as zero_grad() and then a backward that adds.
template <class T>
std::unique_ptr<Net<T>> every_param() {
  auto n = std::make_unique<Net<T>>("every_param", Dims{2, 3, 6, 6});
  const std::string c1 =
      conv(*n, "conv1", {.out = 4, .kernel = 3, .pad = 1});  // a copy: adds move names
  conv(*n, "side", {.out = 2, .kernel = 1}, {c1});  // read by nothing: no gradient reaches it
  bnorm(*n, "bn1", {}, {c1});
  relu(*n, "relu1");
  n->add(std::make_unique<Deconv2dLayer<T>>("up", DeconvOptions{.out = 3, .kernel = 3}));
  pool(*n, "pool", {.alg = PoolAlg::kAvg, .kernel = 2, .stride = 2});
  linear(*n, "fc", {.out = 3});
  softmax_loss(*n, "loss");
  return n;
}

template <class T>
double max_abs(const std::vector<T>& v) {
  double m = 0;
  for (const T x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

template <class T>
void expect_overwritten_grads_are_the_added_ones(Backend b) {
  std::vector<int> labels;
  auto net = every_param<T>();
  prepare(*net, labels);
  Context ctx{.backend = b, .train = true, .labels = labels.data(), .seed = 1};
  net->zero_grad();
  net->forward(ctx);
  net->backward(ctx);
  const std::vector<T> added = net->grads();
  std::fill(net->grads().begin(), net->grads().end(), std::numeric_limits<T>::quiet_NaN());
  ctx.overwrite_grads = true;
  net->forward(ctx);
  net->backward(ctx);
  // exact on the reference kernels; the CPU kernels' sums over threads may take another order
  // from one call to the next (a thread's images: dynamic scheduling)
  const double tol = b == Backend::kRef ? 0.0 : 1e-6 * max_abs(added);
  for (const ParamBlob& blob : net->blobs())
    for (long i = blob.offset; i < blob.offset + blob.count; ++i)
      if (!(std::fabs(double(net->grads()[std::size_t(i)]) - double(added[std::size_t(i)])) <=
            tol)) {
        ADD_FAILURE() << blob.layer << "." << blob.name << "[" << i - blob.offset
                      << "]: " << net->grads()[std::size_t(i)] << " written, "
                      << added[std::size_t(i)] << " added";
        break;
      }
  long zeros = 0;  // the side convolution's, and only those, are zero
  for (const ParamBlob& blob : net->blobs())
    if (std::all_of(added.begin() + blob.offset, added.begin() + blob.offset + blob.count,
                    [](T v) { return v == T(0); })) {
      ++zeros;
      EXPECT_EQ(blob.layer, "side");
    }
  EXPECT_EQ(zeros, 2);
}

TEST(Net, OverwrittenGradientsAreTheAddedOnes) {
  expect_overwritten_grads_are_the_added_ones<double>(Backend::kRef);
  expect_overwritten_grads_are_the_added_ones<float>(Backend::kRef);
  expect_overwritten_grads_are_the_added_ones<float>(Backend::kOpenBlas);
}

// The host arena is advised for huge pages (its whole pages) unless the net is told not to,
// where the kernel has THP at all; the pages change no result.
TEST(Net, AsksForHugePagesForTheArenaUnlessOff) {
  auto on = residual<float>(true);
  auto off = residual<float>(true);
  off->set_huge_pages(false);
  double lon = 0, loff = 0;
  const auto gon = step_grads(*on, Backend::kOpenBlas, lon);
  const auto goff = step_grads(*off, Backend::kOpenBlas, loff);
  EXPECT_EQ(off->huge_pages_advised(), 0);
  const long arena = on->activation_bytes(), page = sysconf(_SC_PAGESIZE);
  ASSERT_GT(arena, 4 * page);
  if (thp_mode() == "unavailable") {
    EXPECT_EQ(on->huge_pages_advised(), 0);
  } else {
    EXPECT_GE(on->huge_pages_advised(), arena - 2 * page);
    EXPECT_LE(on->huge_pages_advised(), arena);
  }
  EXPECT_EQ(lon, loff);
  EXPECT_EQ(gon, goff);
  EXPECT_THROW(on->set_huge_pages(false), Error);  // after allocate()
}

TEST(Net, BadGraphsAreClearErrors) {
  Net<float> n("bad", Dims{1, 3, 8, 8});
  conv(n, "conv1", {.out = 4, .kernel = 3});
  EXPECT_THROW(conv(n, "conv1", {.out = 4, .kernel = 3}), ConfigError);  // name used twice
  EXPECT_THROW(conv(n, "conv2", {.out = 4, .kernel = 3}, {"nope"}), ConfigError);  // unknown input
  EXPECT_THROW(n.allocate(1), ConfigError);                                        // no loss
}

TEST(Net, ParametersLiveInOneAlignedBuffer) {
  auto net = branching<float>();
  long sum = 0, end = 0;
  for (const ParamBlob& b : net->blobs()) {
    EXPECT_EQ(b.offset % 16, 0) << b.layer << "/" << b.name;
    EXPECT_GE(b.offset, end) << "blobs overlap";
    end = b.offset + b.count;
    sum += b.count;
  }
  EXPECT_EQ(sum, net->parameters());
  std::vector<int> labels;
  prepare(*net, labels);
  EXPECT_EQ(long(net->weights().size()), long((end + 15) / 16 * 16));
}

// The fan-out scratch is planned where a backward writes a gradient to it: in the branching net
// at kk's second reading of k and at the add's reading of b (concat wrote b's gradient first);
// none where every later reader adds to the gradient itself (two convolutions reading t).
TEST(Net, FanOutScratchOnlyWhereABackwardUsesIt) {
  auto b = branching<float>();
  b->allocate(1);
  EXPECT_EQ(b->fanout_scratch_bytes(), (2 * 8 * 6 * 6 + 2 * 4 * 6 * 6) * long(sizeof(float)));
  EXPECT_GE(b->activation_bytes(), b->activation_lower_bound_bytes());
  Net<float> n("two_convs", Dims{2, 3, 6, 6});
  const ConvOptions c3{.out = 4, .kernel = 3, .pad = 1};
  conv(n, "conv1", c3);
  const std::string t = n.add(std::make_unique<ActLayer<float>>("t", Act::kTanh));
  conv(n, "b", c3, {t});
  conv(n, "c", c3, {t});
  n.add(std::make_unique<AddLayer<float>>("s"), {"b", "c"});
  linear(n, "fc", {.out = 3});
  softmax_loss(n, "loss");
  n.allocate(1);
  EXPECT_EQ(n.fanout_scratch_bytes(), 0);
}

// A value no backward reads lives to its last reader's forward only: bn2's output, read by the
// residual add alone (which reads no inputs backward), gives its memory to a later activation,
// while conv2's (bn2's input, read by its backward) overlaps no value made after it. The steps
// with those buffers poisoned are checked above (FusedReluGivesTheSameStep).
TEST(Net, ValuesNoBackwardReadsDieAtTheirLastReader) {
  auto n = residual<float>(false);
  n->allocate(1);
  const auto reused_after_add = [&](const std::string& t) {  // by a value made after "add"
    const float *lo = n->output(t), *hi = lo + n->dims(t).count();
    bool after = false;
    for (std::size_t i = 0; i < n->size(); ++i) {
      const std::string name = n->layer_name(i);
      const float* v = n->output(name);
      if (after && v < hi && lo < v + n->dims(name).count()) return true;
      after = after || name == "add";
    }
    return false;
  };
  EXPECT_TRUE(reused_after_add("bn2"));
  EXPECT_FALSE(reused_after_add("conv2"));
}

// An external input: the plan keeps no buffer for the data (the live bound drops by exactly
// its size), forward refuses to run without one, and the step reading the caller's buffer is
// the planned-input net's.
TEST(Net, ExternalInputIsReadInPlace) {
  auto planned = residual<float>(true);
  auto external = residual<float>(true);
  external->set_external_input(true);
  std::vector<int> labels;
  prepare(*planned, labels);
  labels.push_back(0);
  external->allocate(1);
  external->weights() = planned->weights();
  EXPECT_EQ(external->input(), nullptr);
  const long data_bytes = planned->input_dims().count() * long(sizeof(float));
  EXPECT_EQ(external->activation_lower_bound_bytes(),
            planned->activation_lower_bound_bytes() - data_bytes);
  const Context ctx{.train = true, .labels = labels.data(), .seed = 1};
  EXPECT_THROW(external->forward(ctx), Error);
  std::vector<float> x(planned->input(), planned->input() + planned->input_dims().count());
  external->set_input(x.data());
  for (Net<float>* n : {planned.get(), external.get()}) {
    n->set_poison_dead(true);
    n->zero_grad();
    n->forward(ctx);
    n->backward(ctx);
  }
  EXPECT_EQ(external->grads(), planned->grads());
  EXPECT_THROW(external->set_external_input(false), Error);  // after allocate()
}

// workspace_bytes: the convolution workspace of the thread that runs the layers, after the
// passes (a thread of its own here: the workspace is per thread and shared by its nets).
TEST(Net, WorkspaceBytesAreTheThreadsConvolutionWorkspace) {
  ConvWorkspace ws;
  ws.col = {std::vector<float>(10), std::vector<float>(20)};
  ws.dw = {std::vector<float>(3)};
  ws.wino_u.resize(5), ws.wino_acc.resize(7);
  ws.wino_v.reserve(100);  // capacity the kernels never wrote: not counted
  EXPECT_EQ(ws.bytes(), 45 * long(sizeof(float)));
  long before = -1, after = -1, direct = -1;
  std::thread([&] {
    auto n = branching<float>();
    std::vector<int> labels;
    prepare(*n, labels);
    before = n->workspace_bytes();
    const Context ctx{.train = true, .labels = labels.data(), .seed = 1};
    n->forward(ctx);
    n->backward(ctx);
    after = n->workspace_bytes(), direct = conv_workspace().bytes();
  }).join();
  EXPECT_EQ(before, 0);
  EXPECT_EQ(after, direct);
  // at least conv1's columns: 3 x 3 x 3 rows by 6 x 6 output positions, an image
  EXPECT_GE(after, 27 * 36 * long(sizeof(float)));
}

// The offset planner against a brute-force check: requests whose lifetimes intersect never
// share memory, offsets are aligned, and the arena covers them all and is at least the bound.
TEST(MemoryPlan, LiveRequestsNeverOverlap) {
  for (std::uint64_t trial = 0; trial < 50; ++trial) {
    std::vector<MemRequest> req;
    const int n = 2 + int(rng_bits(trial, 0) % 40);
    for (int i = 0; i < n; ++i) {
      const long a = long(rng_bits(trial, 3 * i + 1) % 30),
                 b = long(rng_bits(trial, 3 * i + 2) % 30);
      req.push_back(
          {std::min(a, b), std::max(a, b), 1 + long(rng_bits(trial, 3 * i + 3) % 1000), -1});
    }
    const long arena = plan_offsets(req, 16);
    EXPECT_GE(arena, live_lower_bound(req));
    for (std::size_t i = 0; i < req.size(); ++i) {
      EXPECT_EQ(req[i].offset % 16, 0);
      EXPECT_LE(req[i].offset + req[i].size, arena);
      for (std::size_t j = 0; j < i; ++j) {
        const bool live_together = req[i].start <= req[j].end && req[j].start <= req[i].end;
        const bool overlap = req[i].offset < req[j].offset + req[j].size &&
                             req[j].offset < req[i].offset + req[i].size;
        EXPECT_FALSE(live_together && overlap)
            << "trial " << trial << ": requests " << j << " and " << i;
      }
    }
  }
  // a chain: a, b, c live one after another fit in the largest of them
  std::vector<MemRequest> chain = {{0, 1, 100, -1}, {2, 3, 300, -1}, {4, 5, 200, -1}};
  EXPECT_EQ(plan_offsets(chain, 1), 300);
}

}  // namespace
}  // namespace dls
