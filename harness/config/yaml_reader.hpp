// Strict reading of the harness's YAML files (site configurations, plans): every mapping is
// read through a YamlMap that knows the file and remembers which keys were taken, so an unknown
// key, a missing required one, a wrong type or an impossible value is a ConfigError naming
// "file:line: key: what was expected".
// Quantities with units are strings ("1.5 us", "12 GB/s", "3.05 TFLOP/s", "64 GiB") or plain
// numbers in the key's SI unit; parse_quantity converts to SI (seconds, bytes, bytes/s, FLOP/s).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace dls {

// Loads a YAML file; a missing file, a syntax error, a key that is not a plain string, a key
// given twice in one mapping or an alias bomb is a ConfigError with file and line.
YAML::Node load_yaml_file(const std::string& path);

// The names (file stems) of the .yaml files in dir, sorted; none when dir cannot be read.
std::vector<std::string> yaml_names_in(const std::string& dir);

class YamlMap {
 public:
  // `where` names the mapping in messages ("site", "experiments[2]").
  YamlMap(YAML::Node node, std::string file, std::string where);

  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key);  // marks the key taken (null node if absent)
  std::string str(const std::string& key);  // required
  std::string str(const std::string& key, const std::string& dflt);
  // a string that `check` (safe_text.hpp) accepts; its reason is the error otherwise
  using TextCheck = std::string (*)(const std::string&);
  std::string checked(const std::string& key, const std::string& dflt, TextCheck check);
  std::string name(const std::string& key);  // required, bad_name-checked
  long integer(const std::string& key, long dflt, long min, long max);
  long integer(const std::string& key, long min, long max);  // required
  double number(const std::string& key, double dflt, double min, double max);
  bool boolean(const std::string& key, bool dflt);
  // a quantity in `unit` ("s", "B", "B/s", "FLOP/s"); 0 if absent
  double quantity(const std::string& key, const std::string& unit);
  std::vector<std::string> strings(const std::string& key);  // a scalar or a sequence of scalars
  YamlMap map(const std::string& key);                       // required nested mapping
  // After reading: any key not taken is an error listing the keys this mapping accepts.
  void done(const std::vector<std::string>& also_allowed = {});

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string at(const YAML::Node& n) const;  // "file:line"
  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  YAML::Node n_;
  std::string file_, where_;
  std::vector<std::string> taken_;
};

// "12 GB/s" -> 1.2e10 (decimal prefixes k M G T P, binary Ki Mi Gi Ti); `unit` is the SI unit
// the text must end with (after the prefix). Throws std::invalid_argument with the reason.
double parse_quantity(const std::string& text, const std::string& unit);

}  // namespace dls
