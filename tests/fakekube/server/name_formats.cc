// Name and key formats (see name_formats.h), after apimachinery's
// pkg/util/validation/validation.go.
#include "tests/fakekube/server/name_formats.h"

#include <initializer_list>
#include <regex>

namespace edl::fakekube {
namespace {

// RegexError(): the message, its examples and the regular expression.
std::string RegexError(const std::string& message, const std::string& format,
                       std::initializer_list<const char*> examples) {
  std::string out = message + " (e.g. ";
  bool first = true;
  for (const char* example : examples) {
    if (!first) out += " or ";
    out += std::string("'") + example + "', ";
    first = false;
  }
  return out + "regex used for validation is '" + format + "')";
}

std::string MaxLenError(size_t length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

// A regular expression as apimachinery writes it in its messages, and
// compiled once.
struct Format {
  explicit Format(const char* text) : text(text), regex(text) {}
  bool Matches(const std::string& value) const { return std::regex_match(value, regex); }
  const char* text;
  std::regex regex;
};

const Format& LabelFormat() {
  static const Format format("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return format;
}
const Format& SubdomainFormat() {
  static const Format format("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return format;
}
const Format& Dns1035Format() {
  static const Format format("[a-z]([-a-z0-9]*[a-z0-9])?");
  return format;
}
const Format& QualifiedNameFormat() {
  static const Format format("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  return format;
}
const Format& ConfigMapKeyFormat() {
  static const Format format("[-._a-zA-Z0-9]+");
  return format;
}

const char kQualifiedNameMessage[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

}  // namespace

std::vector<std::string> Dns1123LabelErrors(const std::string& value) {
  std::vector<std::string> errors;
  if (value.size() > 63) errors.push_back(MaxLenError(63));
  if (!LabelFormat().Matches(value)) {
    errors.push_back(RegexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character",
        LabelFormat().text, {"my-name", "123-abc"}));
  }
  return errors;
}

std::vector<std::string> Dns1123SubdomainErrors(const std::string& value) {
  std::vector<std::string> errors;
  if (value.size() > 253) errors.push_back(MaxLenError(253));
  if (!SubdomainFormat().Matches(value)) {
    errors.push_back(RegexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character",
        SubdomainFormat().text, {"example.com"}));
  }
  return errors;
}

std::vector<std::string> Dns1035LabelErrors(const std::string& value) {
  std::vector<std::string> errors;
  if (value.size() > 63) errors.push_back(MaxLenError(63));
  if (!Dns1035Format().Matches(value)) {
    errors.push_back(RegexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character",
        Dns1035Format().text, {"my-name", "abc-123"}));
  }
  return errors;
}

std::vector<std::string> QualifiedNameErrors(const std::string& value) {
  std::vector<std::string> errors;
  std::string name = value;
  const size_t slash = value.find('/');
  if (slash != std::string::npos) {
    if (value.find('/', slash + 1) != std::string::npos) {
      errors.push_back("a qualified name " +
                       RegexError(kQualifiedNameMessage, QualifiedNameFormat().text,
                                  {"MyName", "my.name", "123-abc"}) +
                       " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')");
      return errors;
    }
    const std::string prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errors.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& e : Dns1123SubdomainErrors(prefix)) {
        errors.push_back("prefix part " + e);
      }
    }
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errors.push_back("name part " + MaxLenError(63));
  }
  if (!QualifiedNameFormat().Matches(name)) {
    errors.push_back("name part " + RegexError(kQualifiedNameMessage, QualifiedNameFormat().text,
                                               {"MyName", "my.name", "123-abc"}));
  }
  return errors;
}

std::vector<std::string> ConfigMapKeyErrors(const std::string& value) {
  std::vector<std::string> errors;
  if (value.size() > 253) errors.push_back(MaxLenError(253));
  if (!ConfigMapKeyFormat().Matches(value)) {
    errors.push_back(
        RegexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                   ConfigMapKeyFormat().text, {"key.name", "KEY_NAME", "key-name"}));
  }
  if (value == ".") {
    errors.push_back("must not be '.'");
  } else if (value == "..") {
    errors.push_back("must not be '..'");
  } else if (value.rfind("..", 0) == 0) {
    errors.push_back("must not start with '..'");
  }
  return errors;
}

}  // namespace edl::fakekube
