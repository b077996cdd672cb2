// CLI11 validators from the engine's own parse functions: a wrong value is refused while the
// command line is parsed, with the message of the parse function (which lists the allowed
// values), and the typed value is stored then, once.
#pragma once

#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "measure/check.hpp"
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

// Why `app` would refuse `args` (the words after the subcommand), its parse or then() throwing
// a CLI11 ParseError or a ConfigError; "" when it would not. Nothing is printed.
template <class Then>
std::string args_refusal(CLI::App& app, const std::vector<std::string>& args, Then then) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them so
  try {
    app.parse(reversed);
    then();
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
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

// A finite number in [lo, hi] ((lo, hi] where `lo_open`). NaN and the infinities are refused by
// name (CLI::Range would print the double's whole range as its bound); hi infinite: no upper
// bound.
inline CLI::Validator finite_in(double lo, double hi = std::numeric_limits<double>::infinity(),
                                bool lo_open = false) {
  const std::string range = std::isinf(hi)
                                ? fmt::format("{} {}", lo_open ? ">" : ">=", lo)
                                : fmt::format("in {}{}, {}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size();
        if (number && std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi) return {};
        return fmt::format("'{}': expected a finite number {}", text, range);
      },
      "FLOAT " + range);
}

// A whole number >= lo (a count: steps, samples, ranks); CLI::PositiveNumber would print the
// double's whole range as its bound.
inline CLI::Validator whole_at_least(long lo) {
  return CLI::Validator(
      [lo](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (number && v >= lo) return {};
        return fmt::format("'{}': expected a whole number >= {}", text, lo);
      },
      fmt::format("INT >= {}", lo));
}

// Any text but the empty one (a path given as "" would fall back to a default silently).
inline CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) {
        return text.empty() ? std::string("an empty value") : std::string();
      },
      "");
}

// A JSON Lines file to append records to (--out): a path, not "", that is a regular file where it
// exists (a folder failed at open, a device such as /dev/null at the fdatasync after the run).
inline CLI::Validator records_file() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty path (leave --out out to write no records)";
        std::error_code ec;
        const auto st = std::filesystem::status(text, ec);
        if (ec && ec != std::errc::no_such_file_or_directory)  // a link loop, a file as a folder
          return fmt::format("'{}': {}", text, ec.message());
        if (!std::filesystem::exists(st)) return {};
        if (std::filesystem::is_regular_file(st)) {
          // the file the command's progress and summary lines go to would interleave with them
          struct stat f {};
          if (::stat(text.c_str(), &f) != 0) return {};
          for (const int fd : {1, 2})
            if (struct stat o{};
                ::fstat(fd, &o) == 0 && f.st_dev == o.st_dev && f.st_ino == o.st_ino)
              return fmt::format("'{}' is this command's standard {}, which its lines go to", text,
                                 fd == 1 ? "output" : "error");
          return {};
        }
        return fmt::format("'{}' is {}: expected a JSON Lines file to append records to", text,
                           std::filesystem::is_directory(st) ? "a folder" : "not a regular file");
      },
      "FILE");
}

// A positive finite number (a rate, a size, a factor).
inline CLI::Validator positive_finite() {
  return finite_in(0, std::numeric_limits<double>::infinity(), true);
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
