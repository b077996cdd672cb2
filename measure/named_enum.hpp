// Enums with names: one table of (value, name) per enum, read both ways. The name is what a
// command line takes and a record holds; the value is what the code switches on. A wrong name is
// a ConfigError naming the option and listing the allowed names.
//
//   enum class Overlap { kThread, kNone };
//   inline constexpr Named<Overlap> kOverlapNames[] = {{Overlap::kThread, "thread"}, ...};
//   name_of(kOverlapNames, Overlap::kNone) == "none"
//   parse_named(kOverlapNames, "thread", "--overlap") == Overlap::kThread
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "measure/check.hpp"

namespace dls {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
std::string name_of(const Named<E> (&table)[N], E e) {
  for (const Named<E>& n : table)
    if (n.value == e) return std::string(n.name);
  throw Error(fmt::format("enum value {} has no name", int(e)));
}

template <class E, std::size_t N>
std::vector<std::string> names_of(const Named<E> (&table)[N]) {
  std::vector<std::string> names;
  for (const Named<E>& n : table) names.emplace_back(n.name);
  return names;
}

// `what` names the option or key in the error ("--overlap").
template <class E, std::size_t N>
E parse_named(const Named<E> (&table)[N], std::string_view text, std::string_view what) {
  for (const Named<E>& n : table)
    if (n.name == text) return n.value;
  throw ConfigError(
      fmt::format("{} '{}': expected one of {}", what, text, fmt::join(names_of(table), ", ")));
}

}  // namespace dls
