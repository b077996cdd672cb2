// CLI11 validators from the engine's own parse functions: a wrong value is refused while the
// command line is parsed, with the message of the parse function (which lists the allowed
// values), and the typed value is stored then, once.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace dls {

// Parses the option's text into `target` with parse(text) (which throws on a wrong value).
template <class T, class Parse>
CLI::Validator parsed_into(T& target, Parse parse, const std::string& what) {
  return CLI::Validator(
      [&target, parse](std::string& text) -> std::string {
        try {
          target = parse(text);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      what);
}

// Only checks the text with parse(text) (the value is converted later).
template <class Parse>
CLI::Validator checked_by(Parse parse, const std::string& what) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      what);
}

}  // namespace dls
