#include "cmd/flag_errors.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace edl::cmd {
namespace {

// "0.000000" -> "0", "1000" -> "1000", "1e+308"-sized bounds -> "".
std::string Bound(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || std::fabs(v) >= 1e300) return "";
  std::string s = text;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

bool IsNumber(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// What the flag named `flag` takes, from its option's type name ("INT",
// "UINT", "FLOAT", …), searched in every subcommand; "" when unknown.
std::string Takes(const std::string& flag, const CLI::App& app) {
  std::string type;
  for (const CLI::App* a : app.get_subcommands({})) {
    if (const CLI::Option* o = a->get_option_no_throw(flag)) type = o->get_type_name();
  }
  if (const CLI::Option* o = app.get_option_no_throw(flag)) type = o->get_type_name();
  if (type.find("UINT") != std::string::npos) return "a whole number of 0 or more";
  if (type.find("INT") != std::string::npos) return "a whole number";
  if (type.find("FLOAT") != std::string::npos) return "a number";
  return "";
}

}  // namespace

std::string FlagErrorSentence(const std::string& message, const CLI::App& app) {
  std::smatch m;
  // --flag: Value X not in range A to B
  if (std::regex_match(message, m,
                       std::regex(R"((--[\w-]+): Value (.*) not in range (\S+) to (\S+))"))) {
    const std::string flag = m[1], value = m[2], lo = Bound(m[3]), hi = Bound(m[4]);
    if (!IsNumber(value)) return flag + ": \"" + value + "\" is not a number";
    if (hi.empty()) return flag + ": " + value + " is too small; it must be at least " + lo;
    if (lo.empty()) return flag + ": " + value + " is too large; it must be at most " + hi;
    return flag + ": " + value + " is out of range; it must be between " + lo + " and " + hi;
  }
  // Could not convert: --flag = X
  if (std::regex_match(message, m, std::regex(R"(Could not convert: (--[\w-]+) = (.*))"))) {
    const std::string flag = m[1], value = m[2], takes = Takes(flag, app);
    return flag + ": \"" + value + "\" is not " + (takes.empty() ? "a valid value" : takes);
  }
  // --flag: X not in {a,b}
  if (std::regex_match(message, m, std::regex(R"((--[\w-]+): (.*) not in \{(.*)\})"))) {
    std::string choices = m[3];
    for (size_t at = 0; (at = choices.find(',', at)) != std::string::npos; at += 2) {
      choices.replace(at, 1, ", ");
    }
    return std::string(m[1]) + ": \"" + std::string(m[2]) + "\" is not one of " + choices;
  }
  // The following argument was not expected: --flag
  if (std::regex_match(message, m,
                       std::regex(R"(The following arguments? (?:was|were) not expected: (.*))"))) {
    return "unknown flag(s) or extra argument(s): " + std::string(m[1]);
  }
  return message;
}

}  // namespace edl::cmd
