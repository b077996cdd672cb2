// CLI11 validators from the engine's own parse functions: a wrong value is refused while the
// command line is parsed, with the message of the parse function (which lists the allowed
// values), and the typed value is stored then, once.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

#include "measure/named_enum.hpp"

namespace dls {

// "" when f() returns, else the message of what it threw (CLI11's refusal text).
template <class F>
std::string refusal_of(F f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Parses the option's text into `target` with parse(text) (which throws on a wrong value).
// The option has no bound variable: give it a type_name for --help.
template <class T, class Parse>
CLI::Validator parsed_into(T& target, Parse parse) {
  return CLI::Validator(
      [&target, parse](std::string& text) { return refusal_of([&] { target = parse(text); }); },
      "");
}

// Only checks the text with parse(text) (the value is converted later).
template <class Parse>
CLI::Validator checked_by(Parse parse, const std::string& what) {
  return CLI::Validator([parse](std::string& text) { return refusal_of([&] { parse(text); }); },
                        what);
}

// An option whose value is one of the names of `table`, stored in `target` as its enum; the
// default shown is the name of target's value. `flag` is the long flag ("--overlap").
template <class E, std::size_t N>
CLI::Option* add_named(CLI::App* app, const std::string& flag, E& target,
                       const Named<E> (&table)[N], const std::string& help) {
  const auto parse = [&table, flag](const std::string& text) {
    return parse_named(table, text, flag);
  };
  return app->add_option(flag, help)
      ->check(parsed_into(target, parse))
      ->type_name(fmt::format("{{{}}}", fmt::join(names_of(table), ",")))
      ->default_str(name_of(table, target));
}

}  // namespace dls
