// The schemes' choices that are names on the command line and in records, as enums with their
// name tables (measure/named_enum.hpp): parsed once, by dlscale train's CLI11 validators.
// No MPI here: the build without MPI reads the same options (and refuses the schemes).
#pragma once

#include <string>
#include <vector>

#include "measure/named_enum.hpp"

namespace dls {

enum class Algo;  // collectives/allreduce.hpp (declared here only: no MPI in this header)

// --allreduce: auto (the fastest host algorithm measured at start; NCCL with --backend cudnn
// where built and every rank has a GPU of its own), one host algorithm of
// collectives/allreduce.hpp, or nccl (device memory).
struct AllreduceRequest {
  enum class Kind { kAuto, kHost, kNccl } kind = Kind::kAuto;
  Algo algo{};  // kHost: the algorithm

  std::string name() const;  // as --allreduce and the records spell it
  static AllreduceRequest parse(const std::string& text);  // ConfigError listing names()
  static std::vector<std::string> names();                 // auto, the algorithms, nccl
};

// ssgd: how a bucket's allreduce overlaps the rest of backward: on a communication thread, as
// nonblocking MPI calls progressed between layers, or not at all (every bucket after backward).
enum class Overlap { kThread, kNonblocking, kNone };
inline constexpr Named<Overlap> kOverlapNames[] = {
    {Overlap::kThread, "thread"}, {Overlap::kNonblocking, "nonblocking"}, {Overlap::kNone, "none"}};

// ssgd: the bounds of --comm-teams and --comm-threads-per-team (gradient_sync.hpp)
inline constexpr int kMaxCommTeams = 16, kMaxCommThreadsPerTeam = 64;

// localsgd: what happens to the optimizer's momentum buffers at an average (averaged with the
// weights, zeroed, or each rank's own) and to the batch-norm running statistics.
enum class LocalMomentum { kAverage, kReset, kLocal };
inline constexpr Named<LocalMomentum> kLocalMomentumNames[] = {{LocalMomentum::kAverage, "average"},
                                                               {LocalMomentum::kReset, "reset"},
                                                               {LocalMomentum::kLocal, "local"}};
enum class LocalBn { kAverage, kLocal };
inline constexpr Named<LocalBn> kLocalBnNames[] = {{LocalBn::kAverage, "average"},
                                                   {LocalBn::kLocal, "local"}};

// easgd: the moving rate when none is given: paper 0.9 / p, tf 0.9 / (tau p).
enum class AlphaRule { kPaper, kTf };
inline constexpr Named<AlphaRule> kAlphaRuleNames[] = {{AlphaRule::kPaper, "paper"},
                                                       {AlphaRule::kTf, "tf"}};

}  // namespace dls
