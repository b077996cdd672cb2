// Strict YAML reading (see yaml_reader.hpp).
#include "harness/config/yaml_reader.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "harness/config/safe_text.hpp"
#include "measure/check.hpp"
#include "measure/utf8.hpp"

namespace dls {

std::vector<std::string> yaml_names_in(const std::string& dir) {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") v.push_back(e.path().stem().string());
  std::sort(v.begin(), v.end());
  return v;
}

namespace {

constexpr long kMaxNodes = 100000;  // a shipped plan has a few hundred; more is an alias bomb

std::string line_of(const YAML::Node& n, const std::string& path) {
  const auto m = n.Mark();
  return m.line >= 0 ? fmt::format("{}:{}", path, m.line + 1) : path;
}

// Every mapping's keys are plain scalars and unique (yaml-cpp keeps the first of two equal keys
// silently, so a second `bound:` would be ignored); every scalar is UTF-8; the document is not
// an alias bomb.
void check_document(const YAML::Node& n, const std::string& path, long& visited) {
  if (++visited > kMaxNodes)
    throw ConfigError(fmt::format(
        "{}: more than {} YAML nodes (aliases expanding?); not a plan or site", path, kMaxNodes));
  if (n.IsScalar() && !valid_utf8(n.Scalar()))
    throw ConfigError(fmt::format("{}: a value that is not valid UTF-8", line_of(n, path)));
  if (n.IsMap()) {
    std::map<std::string, int> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        throw ConfigError(fmt::format("{}: a key must be a plain string, not a list or a mapping",
                                      line_of(kv.first, path)));
      const std::string k = kv.first.as<std::string>();
      if (!valid_utf8(k))
        throw ConfigError(
            fmt::format("{}: a key that is not valid UTF-8", line_of(kv.first, path)));
      const int line = kv.first.Mark().line + 1;
      if (const auto it = seen.find(k); it != seen.end())
        throw ConfigError(fmt::format("{}: key '{}' appears twice (first at line {})",
                                      line_of(kv.first, path), k, it->second));
      seen[k] = line;
      check_document(kv.second, path, visited);
    }
  } else if (n.IsSequence()) {
    for (const auto& e : n) check_document(e, path, visited);
  }
}

// The events of a document, ignored but for where it starts and whether it holds anything.
struct DocumentStarts : YAML::EventHandler {
  long line = -1;
  bool content = false;  // anything but an empty document (a bare trailing '---' is empty)
  void OnDocumentStart(const YAML::Mark& m) override { line = m.line; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { content = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    content = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    content = true;
  }
  void OnMapEnd() override {}
};

// The 0-based line where a second document with content starts, -1 if there is none (an empty
// one, a file ending in a bare '---', drops nothing). Only one document
// past the first is asked for: yaml-cpp 0.7's LoadAll never ends on some inputs (the fuzzer's
// "#\n  !scalte,\n     de": its parser returns document after document), which a second
// document then stands for.
long second_document_line(const std::string& path) {
  std::ifstream in(path);
  YAML::Parser parser(in);
  DocumentStarts starts;
  if (!parser.HandleNextDocument(starts)) return -1;
  starts.line = 0;
  starts.content = false;
  return parser.HandleNextDocument(starts) && starts.content ? starts.line : -1;
}

}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw ConfigError(fmt::format("{}: no such file", path));
  YAML::Node doc;
  long second = -1;
  try {
    doc = YAML::LoadFile(path);
    second = second_document_line(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}: YAML syntax: {}", path, e.mark.line + 1, e.msg));
  }
  if (second >= 0)  // LoadFile reads the first document and drops the rest unread
    throw ConfigError(fmt::format(
        "{}:{}: a second YAML document (after '---'); a plan or site is one document: merge them",
        path, second + 1));
  long visited = 0;
  check_document(doc, path, visited);
  return doc;
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string where)
    : n_(std::move(node)), file_(std::move(file)), where_(std::move(where)) {
  if (!n_.IsMap())
    throw ConfigError(fmt::format("{}: {}: expected a mapping of keys", at(n_), where_));
}

std::string YamlMap::at(const YAML::Node& n) const {
  const auto m = n.Mark();
  return m.line >= 0 ? fmt::format("{}:{}", file_, m.line + 1) : file_;
}

void YamlMap::fail(const std::string& key, const std::string& what) const {
  const YAML::Node v = n_[key];
  throw ConfigError(fmt::format("{}: {}.{}: {}", at(v ? v : n_), where_, key, what));
}

bool YamlMap::has(const std::string& key) const { return bool(n_[key]); }

YAML::Node YamlMap::node(const std::string& key) {
  taken_.push_back(key);
  return n_[key];
}

std::string YamlMap::str(const std::string& key) {
  if (!has(key)) fail(key, "required (a string)");
  return str(key, "");
}

std::string YamlMap::str(const std::string& key, const std::string& dflt) {
  const YAML::Node v = node(key);
  if (!v) return dflt;
  if (!v.IsScalar()) fail(key, "expected a string");
  std::string text = v.as<std::string>();
  if (const std::string why = bad_any_text(text); !why.empty()) fail(key, why);
  return text;
}

std::string YamlMap::checked(const std::string& key, const std::string& dflt, TextCheck check) {
  const std::string v = str(key, dflt);
  if (has(key))
    if (const std::string why = check(v); !why.empty()) fail(key, why);
  return v;
}

std::string YamlMap::name(const std::string& key) {
  if (!has(key)) fail(key, "required (a name)");
  return checked(key, "", bad_name);
}

long YamlMap::integer(const std::string& key, long min, long max) {
  if (!has(key)) fail(key, fmt::format("required (an integer in [{}, {}])", min, max));
  return integer(key, min, min, max);
}

long YamlMap::integer(const std::string& key, long dflt, long min, long max) {
  const YAML::Node v = node(key);
  if (!v) return dflt;
  long x = 0;
  try {
    if (!v.IsScalar()) throw std::invalid_argument("not a scalar");
    x = v.as<long>();
  } catch (const std::exception&) {
    fail(key, fmt::format("expected an integer, got '{}'",
                          v.IsScalar() ? v.as<std::string>() : "a collection"));
  }
  if (x < min || x > max) fail(key, fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

double YamlMap::number(const std::string& key, double dflt, double min, double max) {
  const YAML::Node v = node(key);
  if (!v) return dflt;
  double x = 0;
  try {
    if (!v.IsScalar()) throw std::invalid_argument("not a scalar");
    x = v.as<double>();
  } catch (const std::exception&) {
    fail(key, fmt::format("expected a number, got '{}'",
                          v.IsScalar() ? v.as<std::string>() : "a collection"));
  }
  if (!(x >= min && x <= max)) fail(key, fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

bool YamlMap::boolean(const std::string& key, bool dflt) {
  const YAML::Node v = node(key);
  if (!v) return dflt;
  try {
    if (!v.IsScalar()) throw std::invalid_argument("not a scalar");
    return v.as<bool>();
  } catch (const std::exception&) {
    fail(key, "expected true or false");
  }
}

double YamlMap::quantity(const std::string& key, const std::string& unit) {
  const YAML::Node v = node(key);
  if (!v) return 0;
  if (!v.IsScalar())
    fail(key, fmt::format("expected a quantity in {} (e.g. '12 G{}')", unit, unit));
  try {
    return parse_quantity(v.as<std::string>(), unit);
  } catch (const std::invalid_argument& e) {
    fail(key, e.what());
  }
}

std::vector<std::string> YamlMap::strings(const std::string& key) {
  const YAML::Node v = node(key);
  std::vector<std::string> out;
  if (!v) return out;
  if (v.IsScalar()) return {v.as<std::string>()};
  if (!v.IsSequence()) fail(key, "expected a string or a list of strings");
  for (const auto& e : v) {
    if (!e.IsScalar()) fail(key, "expected a list of strings");
    out.push_back(e.as<std::string>());
  }
  return out;
}

YamlMap YamlMap::map(const std::string& key) {
  const YAML::Node v = node(key);
  if (!v) fail(key, "required (a mapping)");
  if (!v.IsMap()) fail(key, "expected a mapping of keys");
  return YamlMap(v, file_, where_ + "." + key);
}

void YamlMap::done(const std::vector<std::string>& also_allowed) {
  for (const auto& kv : n_) {
    const std::string k = kv.first.as<std::string>();
    if (std::find(taken_.begin(), taken_.end(), k) != taken_.end()) continue;
    if (std::find(also_allowed.begin(), also_allowed.end(), k) != also_allowed.end()) continue;
    std::vector<std::string> known = taken_;
    known.insert(known.end(), also_allowed.begin(), also_allowed.end());
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    throw ConfigError(fmt::format("{}: {}: unknown key '{}' (known here: {})", at(kv.first), where_,
                                  k, fmt::join(known, ", ")));
  }
}

double parse_quantity(const std::string& text, const std::string& unit) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(
        fmt::format("'{}' is not a quantity in {} (e.g. '12 G{}')", text, unit, unit));
  }
  if (!std::isfinite(v) || v < 0)
    throw std::invalid_argument(fmt::format("'{}' must be a finite, non-negative quantity", text));
  std::string rest = text.substr(used);
  rest.erase(std::remove(rest.begin(), rest.end(), ' '), rest.end());
  if (rest.empty()) return v;  // a plain number: already SI
  static const std::vector<std::pair<std::string, double>> prefixes = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
      {"n", 1e-9},    {"u", 1e-6},       {"m", 1e-3},          {"k", 1e3},
      {"K", 1e3},     {"M", 1e6},        {"G", 1e9},           {"T", 1e12},
      {"P", 1e15},    {"", 1.0}};
  for (const auto& [p, f] : prefixes)
    if (rest == p + unit) {
      if (!std::isfinite(v * f))
        throw std::invalid_argument(fmt::format("'{}' is too large a quantity", text));
      return v * f;
    }
  throw std::invalid_argument(fmt::format(
      "'{}': expected a number with unit {} (prefixes n u m k M G T P Ki Mi Gi Ti)", text, unit));
}

}  // namespace dls
