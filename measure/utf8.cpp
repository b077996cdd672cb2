// UTF-8 checks (see utf8.hpp).
#include "measure/utf8.hpp"

#include <fmt/format.h>

#include <cstddef>

namespace dls {

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80           ? 0
                  : (c >> 5) == 0x6  ? 1
                  : (c >> 4) == 0xe  ? 2
                  : (c >> 3) == 0x1e ? 3
                                     : -1;
    if (n < 0 || i + std::size_t(n) >= s.size()) return false;
    unsigned long cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + std::size_t(k)]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    const unsigned long min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += std::size_t(n) + 1;
  }
  return true;
}

std::string escaped_bytes(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += ch;
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace dls
