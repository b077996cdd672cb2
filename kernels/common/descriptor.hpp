// Parser for one-line problem descriptors in oneDNN benchdnn's style: a sequence of
// <letters><number> pairs, '_' separators optional, e.g. "g2mb16ic96ih27oc256kh5ph2", ending
// optionally in a name: "_n" followed by a non-digit starts it and it runs to the end of the
// line ("..._nresnet_50:conv1"). Numbers may be decimals with exponents ("alpha1e-4"), or a
// ':'-separated list where an op takes several ("ic64:128:32:32" for a concat).
// Each op's parser checks the keys it allows; errors name the descriptor and what was expected.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dls {

class Descriptor {
 public:
  // Throws ConfigError naming the text and the offending position. `what` names the kind of
  // descriptor in messages ("convolution descriptor").
  Descriptor(std::string_view text, std::string_view what);

  // Throws ConfigError if a key is not in `allowed` (listing the allowed keys).
  void allow_only(const std::set<std::string>& allowed) const;
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  double number(const std::string& key) const;              // throws if absent or a list
  double number(const std::string& key, double def) const;  // def when absent
  // A positive (or, with min 0, non-negative) integer value; def when absent.
  int integer(const std::string& key, int def, int min = 1) const;
  // Every value of a key given as a list (a single number is a list of one); throws if absent.
  std::vector<int> integers(const std::string& key, int min = 1) const;
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::string text_, what_, name_;
  std::map<std::string, std::vector<double>> values_;
  int to_integer(const std::string& key, double v, int min) const;
};

// "a,b,,c" -> {"a", "b", "", "c"}, over each item of a repeatable option in turn.
std::vector<std::string> split_commas(const std::vector<std::string>& in);

// Splits a shapes file into descriptor lines: '#' starts a comment, blank lines are skipped.
// Returns (line number, text) pairs. Throws ConfigError if the file cannot be read.
std::vector<std::pair<int, std::string>> read_shape_file(const std::string& path);

}  // namespace dls
