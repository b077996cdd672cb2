// Descriptor parsing (see descriptor.hpp).
#include "kernels/common/descriptor.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <fstream>

#include "measure/check.hpp"

namespace dls {

Descriptor::Descriptor(std::string_view text, std::string_view what) : text_(text), what_(what) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  if (n == 0) fail("it is empty");
  auto is_alpha = [&](std::size_t k) {
    return k < n && std::isalpha(static_cast<unsigned char>(text[k]));
  };
  auto is_digit = [&](std::size_t k) {
    return k < n && std::isdigit(static_cast<unsigned char>(text[k]));
  };
  while (i < n) {
    if (text[i] == '_') {
      ++i;
      continue;
    }
    // At a key boundary, "n" followed by anything but a digit starts the trailing name.
    if (text[i] == 'n' && i + 1 < n && !is_digit(i + 1)) {
      name_ = std::string(text.substr(i + 1));
      break;
    }
    if (!is_alpha(i))
      fail(fmt::format("expected a key (letters) at position {}, found '{}'", i, text[i]));
    std::size_t k = i;
    while (is_alpha(k)) ++k;
    const std::string key(text.substr(i, k - i));
    // one number, or a ':'-separated list of them ("ic64:128:32:32")
    std::vector<double> nums;
    std::size_t j = k;
    for (;;) {
      const std::size_t start = j;
      while (is_digit(j)) ++j;
      if (j < n && text[j] == '.') {
        ++j;
        while (is_digit(j)) ++j;
      }
      if (j == start) fail(fmt::format("key '{}' at position {} has no number", key, i));
      // exponent: e[+-]digits, only when digits follow (so "...1e" + key does not swallow a key)
      if (j + 1 < n && (text[j] == 'e' || text[j] == 'E')) {
        std::size_t e = j + 1;
        if (e < n && (text[e] == '+' || text[e] == '-')) ++e;
        if (is_digit(e)) {
          j = e;
          while (is_digit(j)) ++j;
        }
      }
      nums.push_back(std::stod(std::string(text.substr(start, j - start))));
      if (j < n && text[j] == ':')
        ++j;
      else
        break;
    }
    if (values_.count(key)) fail(fmt::format("key '{}' appears twice", key));
    values_[key] = std::move(nums);
    i = j;
  }
}

void Descriptor::fail(const std::string& why) const {
  throw ConfigError(fmt::format("{} '{}': {}", what_, text_, why));
}

void Descriptor::allow_only(const std::set<std::string>& allowed) const {
  for (const auto& [k, v] : values_)
    if (!allowed.count(k))
      fail(fmt::format("unknown key '{}' (allowed: {})", k, fmt::join(allowed, ", ")));
}

double Descriptor::number(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) fail(fmt::format("missing key '{}'", key));
  if (it->second.size() != 1) fail(fmt::format("key '{}' takes one number, not a list", key));
  return it->second[0];
}

double Descriptor::number(const std::string& key, double def) const {
  return has(key) ? number(key) : def;
}

int Descriptor::to_integer(const std::string& key, double v, int min) const {
  if (v != std::floor(v) || v < min || v > 1e9)
    fail(fmt::format("key '{}' must be an integer >= {}, got {}", key, min, v));
  return static_cast<int>(v);
}

int Descriptor::integer(const std::string& key, int def, int min) const {
  return has(key) ? to_integer(key, number(key), min) : def;
}

std::vector<int> Descriptor::integers(const std::string& key, int min) const {
  const auto it = values_.find(key);
  if (it == values_.end()) fail(fmt::format("missing key '{}'", key));
  std::vector<int> out;
  for (double v : it->second) out.push_back(to_integer(key, v, min));
  return out;
}

std::vector<std::string> split_commas(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& item : in) {
    std::size_t pos = 0;
    while (true) {
      const auto comma = item.find(',', pos);
      out.push_back(item.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return out;
}

std::vector<std::pair<int, std::string>> read_shape_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("shapes file '{}': cannot be read", path));
  std::vector<std::pair<int, std::string>> out;
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    out.emplace_back(no, line.substr(b, e - b + 1));
  }
  return out;
}

}  // namespace dls
