// Text checks for plan and site values (see safe_text.hpp).
#include "harness/config/safe_text.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace dls {
namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The first character outside `ok`, shown readably ("'\n'", "'/'"), or "".
template <class Ok>
std::string first_bad(const std::string& s, Ok ok) {
  for (char c : s)
    if (!ok(c)) {
      const auto u = static_cast<unsigned char>(c);
      return u < 0x20 || u == 0x7f ? fmt::format("control character 0x{:02x}", u)
                                   : fmt::format("'{}'", c);
    }
  return "";
}

// "" when s holds at most `max` characters and no control character (newline and tab allowed
// where `lines`), else what is wrong.
std::string bad_text(const std::string& s, std::size_t max, bool lines) {
  if (s.size() > max) return fmt::format("{} characters: at most {} are allowed", s.size(), max);
  const std::string c = first_bad(s, [lines](char x) {
    const auto u = static_cast<unsigned char>(x);
    return (u >= 0x20 && u != 0x7f) || (lines && (x == '\n' || x == '\t'));
  });
  return c.empty() ? "" : fmt::format("{} is not allowed", c);
}

}  // namespace

std::string bad_name(const std::string& s) {
  if (s.empty()) return "an empty name";
  if (s.size() > 128) return "longer than 128 characters";
  if (!alnum(s[0])) return fmt::format("'{}' must start with a letter or digit", s.substr(0, 1));
  const std::string c =
      first_bad(s, [](char x) { return alnum(x) || x == '.' || x == '_' || x == '-'; });
  return c.empty() ? ""
                   : fmt::format("{} is not allowed in a name (letters, digits, '.', '_', '-')", c);
}

std::string bad_flag(const std::string& s) {
  if (s.empty() || !lower_or_digit(s[0]))
    return "a flag name starts with a lower-case letter or digit";
  const std::string c =
      first_bad(s, [](char x) { return lower_or_digit(x) || x == '_' || x == '-'; });
  return c.empty() ? "" : fmt::format("{} is not allowed in a flag name (a-z, 0-9, '_', '-')", c);
}

std::string bad_env_name(const std::string& s) {
  if (s.empty() || !(alnum(s[0]) || s[0] == '_') || (s[0] >= '0' && s[0] <= '9'))
    return "a variable name starts with a letter or '_'";
  const std::string c = first_bad(s, [](char x) { return alnum(x) || x == '_'; });
  return c.empty() ? ""
                   : fmt::format("{} is not allowed in a variable name (letters, digits, '_')", c);
}

std::string bad_scheduler_word(const std::string& s) {
  const std::string c = first_bad(s, [](char x) {
    return alnum(x) || std::string_view("._,:+-").find(x) != std::string_view::npos;
  });
  return c.empty() ? ""
                   : fmt::format("{} is not allowed here (letters, digits and . _ , : + -)", c);
}

std::string bad_free_text(const std::string& s) { return bad_text(s, 8192, false); }

std::string bad_arg_value(const std::string& s) {
  if (s.size() > 2048)
    return fmt::format("{} characters: an argument value holds at most 2048", s.size());
  if (std::string b = bad_free_text(s); !b.empty()) return b;
  if (!s.empty() && s[0] == '-') {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0')
      return fmt::format("'{}' starts with '-' but is not a number (it would pose as a flag)", s);
  }
  return "";
}

std::string bad_any_text(const std::string& s) { return bad_text(s, 65536, true); }

}  // namespace dls
