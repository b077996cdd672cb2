// UTF-8 text: records, manifests and JSON documents hold only well-formed UTF-8, so anything that
// may reach one (a command line, a plan's value, a path) is checked where it comes in.
#pragma once

#include <string>
#include <string_view>

namespace dls {

// Whether s is well-formed UTF-8: no overlong forms, surrogates, or code points past U+10FFFF.
bool valid_utf8(std::string_view s);

// s for a message: printable ASCII as it is, every other byte as \xNN (a terminal shows it).
std::string escaped_bytes(std::string_view s);

}  // namespace dls
