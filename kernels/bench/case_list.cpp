// Case expansion (see case_list.hpp).
#include "kernels/bench/case_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "kernels/bench/op_table.hpp"
#include "kernels/common/descriptor.hpp"
#include "measure/check.hpp"

namespace dls {

std::string CaseEntry::name() const {
  return fmt::format("{}/{}/t{}/{}", op, backend_name(backend), threads, kcase->shape());
}

namespace {

struct Line {
  std::string op;  // empty: from --op
  std::string descriptor, source;
};

// "conv2d mb16ic64..." -> op "conv2d"; a lone descriptor -> no op.
Line split_line(const std::string& text, const std::string& source) {
  const auto sp = text.find_first_of(" \t");
  if (sp == std::string::npos) return {"", text, source};
  const auto rest = text.find_first_not_of(" \t", sp);
  if (text.find_first_of(" \t", rest) != std::string::npos)
    throw ConfigError(fmt::format("{}: '{}': expected '[op] descriptor'", source, text));
  return {text.substr(0, sp), text.substr(rest), source};
}

// A case named twice (a backend, batch or thread count repeated, or a shape listed twice) is
// timed once, at its first place, with a note: the benchmark and its record are keyed by the
// case's name, and a second case of one name was left untimed.
void drop_repeats(std::vector<CaseEntry>& cases) {
  std::set<std::string> seen;
  std::vector<CaseEntry> kept;
  for (auto& e : cases) {
    if (seen.insert(e.name()).second) {
      kept.push_back(std::move(e));
      continue;
    }
    fmt::print(stderr, "dlscale kernels: {} ({}) is given twice: timed once\n", e.name(), e.source);
  }
  cases = std::move(kept);
}

}  // namespace

std::vector<CaseEntry> build_cases(const CaseRequest& req) {
  std::vector<Line> lines;
  for (const auto& s : req.shapes) lines.push_back(split_line(s, "--shape"));
  for (const auto& f : req.shape_files)
    for (const auto& [no, text] : read_shape_file(f))
      lines.push_back(split_line(text, fmt::format("{}:{}", f, no)));
  if (lines.empty()) throw ConfigError("no shapes: give --shape DESCRIPTOR or --shapes FILE");

  std::vector<std::string> wanted;  // expanded --op
  for (const auto& op : req.ops)
    for (auto& o : expand_op(op)) wanted.push_back(std::move(o));
  std::vector<Backend> backends;
  for (const auto& b : req.backends) backends.push_back(parse_backend(b));
  if (backends.empty()) backends.push_back(Backend::kOpenBlas);
  // 0 below is "not given" (the default thread count, the descriptor's batch); given, each
  // value must be at least 1
  for (int t : req.threads)
    if (t < 1 || t > 4096) throw ConfigError(fmt::format("--threads {}: expected 1..4096", t));
  for (int mb : req.mbs)
    if (mb < 1) throw ConfigError(fmt::format("--mb {}: expected a positive batch", mb));
  const std::vector<int> threads = req.threads.empty() ? std::vector<int>{0} : req.threads;
  const std::vector<int> mbs = req.mbs.empty() ? std::vector<int>{0} : req.mbs;

  std::vector<CaseEntry> out;
  for (const auto& line : lines) {
    std::vector<std::string> ops;
    if (line.op.empty()) {
      if (wanted.empty())
        throw ConfigError(fmt::format("{}: '{}' names no op; give --op or prefix the line with one",
                                      line.source, line.descriptor));
      ops = wanted;
    } else {
      try {
        ops = expand_op(line.op);
      } catch (const ConfigError& e) {
        throw ConfigError(fmt::format("{}: {}", line.source, e.what()));
      }
      if (!wanted.empty())  // --op filters the ops named in the file
        std::erase_if(ops, [&](const std::string& o) {
          return std::find(wanted.begin(), wanted.end(), o) == wanted.end();
        });
    }
    for (const auto& op : ops)
      for (int mb : mbs)
        for (int t : threads)
          for (Backend b : backends) {
            CaseEntry e;
            e.op = op;
            e.descriptor = line.descriptor;
            e.source = line.source;
            e.backend = b;
            e.threads = t;
            e.mb = mb;
            try {
              e.kcase = find_op(op)->make(line.descriptor, mb);
            } catch (const ConfigError& err) {
              throw ConfigError(fmt::format("{}: {}", line.source, err.what()));
            }
            e.unsupported = e.kcase->supports(b);
            out.push_back(std::move(e));
          }
  }
  if (out.empty())
    throw ConfigError("no cases left: --op matched none of the ops in the shape files");
  drop_repeats(out);
  return out;
}

}  // namespace dls
