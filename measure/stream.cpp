// STREAM triad and the memory bandwidth measured with it (see stream.hpp).
#include "measure/stream.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>

#include "measure/check.hpp"
#include "measure/memory_limit.hpp"
#include "measure/timer.hpp"

namespace dls {
namespace {

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// "32768K", "1M", "512": bytes
long cache_size_bytes(const std::string& text) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = used < text.size() ? text[used] : ' ';
  return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : unit == 'G' ? v << 30 : v;
}

int team(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// b = 1, c = 2, a = 0, each page first written by the thread that will stream it
void first_touch(float* a, float* b, float* c, long n, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(team(threads))
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
}

}  // namespace

UntouchedFloats alloc_untouched(long n) {
  const std::size_t bytes = (std::size_t(std::max(n, 1L)) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!p) throw std::bad_alloc();
  return UntouchedFloats(p);
}

void triad_cpu(float* a, const float* b, const float* c, float s, long n, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(team(threads))
  for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

long last_level_cache_bytes() {
  namespace fs = std::filesystem;
  int top = 0;
  std::map<std::string, long> instances;  // shared_cpu_list of the top level -> size
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = cpu.path().filename();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(name[3])) continue;
    for (const auto& idx : fs::directory_iterator(cpu.path() / "cache", ec)) {
      if (read_line(idx.path() / "type") == "Instruction") continue;
      const int level = std::atoi(read_line(idx.path() / "level").c_str());
      if (level < top) continue;
      if (level > top) instances.clear();
      top = level;
      instances[read_line(idx.path() / "shared_cpu_list")] =
          cache_size_bytes(read_line(idx.path() / "size"));
    }
  }
  long sum = 0;
  for (const auto& [cpus, bytes] : instances) sum += bytes;
  if (sum == 0) sum = std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE));
  return sum;
}

long stream_array_elements() {
  const long floor = 64L << 20;
  long n = std::max(floor, 4 * last_level_cache_bytes() / long(sizeof(float)));
  const double usable = usable_memory().bytes;  // a job's cgroup limit, not only the node's memory
  if (usable > 0) n = std::min(n, long(usable / 8 / double(sizeof(float))));
  return n / 1024 * 1024;
}

MemoryBandwidth measure_memory_bandwidth(int threads, long elements, int trials) {
  threads = std::max(1, threads);
  trials = std::max(1, trials);
  const long n = elements > 0 ? elements : stream_array_elements();
  UntouchedFloats a = alloc_untouched(n), b = alloc_untouched(n), c = alloc_untouched(n);
  first_touch(a.get(), b.get(), c.get(), n, threads);
  triad_cpu(a.get(), b.get(), c.get(), kTriadScalar, n, threads);  // untimed, as STREAM's first
  double best = 1e300;
  for (int t = 0; t < trials; ++t) {
    const CpuTimer timer;
    triad_cpu(a.get(), b.get(), c.get(), kTriadScalar, n, threads);
    best = std::min(best, timer.seconds());
  }
  // 1 + 3 x 2 is exact: every pass wrote what it should have
  DLS_CHECK(a[0] == 7.0f && a[n / 2] == 7.0f && a[n - 1] == 7.0f, "triad: wrong result");
  const double bytes = 3.0 * sizeof(float) * double(n);
  return {bytes / best, "measured",
          fmt::format("STREAM triad, float32, best of {}, {} threads, 3 arrays of {:.0f} MiB, {} "
                      "bytes per element (write-allocate not counted)",
                      trials, threads, double(n) * sizeof(float) / 1048576.0, 3 * sizeof(float)),
          threads, n};
}

void to_json(nlohmann::json& j, const MemoryBandwidth& b) {
  j = {{"bytes_per_s", b.bytes_per_s},
       {"source", b.source},
       {"method", b.method},
       {"threads", b.threads},
       {"array_elements", b.array_elements}};
}

}  // namespace dls
