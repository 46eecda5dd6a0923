// Quantity parsing: integer arithmetic in 128 bits, so "0.1" and "1Ei" are
// exact and overflow is detected rather than wrapped.
#include "tests/fakekube/server/quantity.h"

#include <cctype>
#include <limits>
#include <string_view>

namespace edl::fakekube {
namespace {

using Int128 = __int128;

Status Malformed(const std::string& text) {
  return InvalidArgument("quantity \"" + text +
                         "\": quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

// Multiplier of a suffix as num / den (den is a power of 10).
bool SuffixFactor(std::string_view suffix, Int128* num, Int128* den) {
  *num = 1;
  *den = 1;
  static constexpr std::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (int i = 0; i < 6; ++i) {
    if (suffix == kBinary[i]) {
      *num = Int128{1} << (10 * (i + 1));
      return true;
    }
  }
  static constexpr std::string_view kDecimal[] = {"k", "M", "G", "T", "P", "E"};
  for (int i = 0; i < 6; ++i) {
    if (suffix == kDecimal[i]) {
      for (int k = 0; k < 3 * (i + 1); ++k) *num *= 10;
      return true;
    }
  }
  if (suffix.empty()) return true;
  if (suffix == "m") {
    *den = 1000;
    return true;
  }
  if (suffix == "u") {
    *den = 1000000;
    return true;
  }
  if (suffix == "n") {
    *den = 1000000000;
    return true;
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view exp = suffix.substr(1);
    bool negative = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      negative = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 2) return false;
    int e = 0;
    for (char c : exp) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      e = e * 10 + (c - '0');
    }
    if (e > 18) return false;
    for (int k = 0; k < e; ++k) (negative ? *den : *num) *= 10;
    return true;
  }
  return false;
}

}  // namespace

Result<int64_t> ParseMilliQuantity(const std::string& text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // Mantissa: digits with at most one '.', at least one digit.
  Int128 mantissa = 0;
  Int128 mantissa_den = 1;
  size_t i = 0;
  int digits = 0;
  bool seen_point = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return Malformed(text);
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (++digits > 30) return InvalidArgument("quantity \"" + text + "\": too many digits");
    mantissa = mantissa * 10 + (c - '0');
    if (seen_point) mantissa_den *= 10;
  }
  if (digits == 0) return Malformed(text);
  Int128 num = 0;
  Int128 den = 0;
  if (!SuffixFactor(s.substr(i), &num, &den)) return Malformed(text);
  // milli = ceil(mantissa * num * 1000 / (mantissa_den * den)).
  const Int128 kMax = std::numeric_limits<int64_t>::max();
  const Int128 kInt128Max = ~(Int128{1} << 127);
  if (mantissa > kInt128Max / 1000 / num) {
    return InvalidArgument("quantity \"" + text + "\" is too large");
  }
  Int128 top = mantissa * num;
  top *= 1000;
  Int128 bottom = mantissa_den * den;
  Int128 milli = (top + bottom - 1) / bottom;
  if (milli > kMax) return InvalidArgument("quantity \"" + text + "\" is too large");
  return static_cast<int64_t>(negative ? -milli : milli);
}

std::string FormatMilliQuantity(int64_t milli, bool binary) {
  if (milli % 1000 != 0) return std::to_string(milli) + "m";
  int64_t value = milli / 1000;
  if (binary && value != 0) {
    static const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int k = 0;
    while (k < 6 && value % 1024 == 0) {
      value /= 1024;
      ++k;
    }
    return std::to_string(value) + kSuffix[k];
  }
  return std::to_string(value);
}

}  // namespace edl::fakekube
