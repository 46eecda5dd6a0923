// Label selectors with apimachinery's grammar (labels/selector.go):
// comma-separated requirements `k`, `!k`, `k=v`, `k==v`, `k!=v`,
// `k in (a,b)`, `k notin (a,b)`, `k>N`, `k<N`; all must hold.
#include <cctype>
#include <set>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

struct LabelSelector {
  enum class Op { kExists, kNotExists, kEquals, kNotEquals, kIn, kNotIn, kGreater, kLess };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::set<std::string> values;
  };
  std::vector<Requirement> requirements;
};

namespace {

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '/';
}
bool IsValueChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

Status TermError(const std::string& term, const std::string& why) {
  return InvalidArgument("unable to parse requirement: \"" + term + "\": " + why);
}

Status CheckKey(const std::string& term, const std::string& key) {
  if (key.empty()) return TermError(term, "found '', expected: identifier");
  if (key.size() > 316) return TermError(term, "key too long");
  for (char c : key) {
    if (!IsKeyChar(c)) {
      return TermError(term, std::string("invalid character '") + c + "' in key \"" + key + "\"");
    }
  }
  return Status::Ok();
}

Status CheckValue(const std::string& term, const std::string& value) {
  if (value.size() > 63) return TermError(term, "value longer than 63 characters");
  for (char c : value) {
    if (!IsValueChar(c)) {
      return TermError(term,
                       std::string("invalid character '") + c + "' in value \"" + value + "\"");
    }
  }
  return Status::Ok();
}

// Splits at commas outside parentheses; fails on unbalanced parentheses.
Result<std::vector<std::string>> SplitTerms(const std::string& text) {
  std::vector<std::string> terms;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) {
      return InvalidArgument("unable to parse requirement: unbalanced ')' in \"" + text + "\"");
    }
    if (c == ',' && depth == 0) {
      terms.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (depth != 0) {
    return InvalidArgument("unable to parse requirement: unbalanced '(' in \"" + text + "\"");
  }
  terms.push_back(current);
  return terms;
}

Result<LabelSelector::Requirement> ParseTerm(const std::string& raw) {
  using Op = LabelSelector::Op;
  const std::string term = Trim(raw);
  LabelSelector::Requirement r;
  if (term.empty()) return TermError(raw, "found '', expected: !, identifier");
  if (term[0] == '!') {
    r.key = Trim(term.substr(1));
    r.op = Op::kNotExists;
    EDL_RETURN_IF_ERROR(CheckKey(term, r.key));
    return r;
  }
  size_t key_end = 0;
  while (key_end < term.size() && IsKeyChar(term[key_end])) ++key_end;
  r.key = term.substr(0, key_end);
  EDL_RETURN_IF_ERROR(CheckKey(term, r.key));
  std::string rest = Trim(term.substr(key_end));
  if (rest.empty()) {
    r.op = Op::kExists;
    return r;
  }
  std::string value;
  if (rest.rfind("==", 0) == 0) {
    r.op = Op::kEquals, value = rest.substr(2);
  } else if (rest.rfind("!=", 0) == 0) {
    r.op = Op::kNotEquals, value = rest.substr(2);
  } else if (rest[0] == '=') {
    r.op = Op::kEquals, value = rest.substr(1);
  } else if (rest[0] == '>' || rest[0] == '<') {
    r.op = rest[0] == '>' ? Op::kGreater : Op::kLess;
    value = Trim(rest.substr(1));
    if (value.empty() || value.find_first_not_of("-0123456789") != std::string::npos) {
      return TermError(term, "for 'Gt', 'Lt' operators, the value must be an integer");
    }
    r.values.insert(value);
    return r;
  } else {
    bool in = rest.rfind("in", 0) == 0;
    bool notin = rest.rfind("notin", 0) == 0;
    if (!in && !notin) {
      return TermError(term, "found '" + rest + "', expected: in, notin, =, ==, !=, gt, lt");
    }
    r.op = in ? Op::kIn : Op::kNotIn;
    std::string set = Trim(rest.substr(in ? 2 : 5));
    if (set.size() < 2 || set.front() != '(' || set.back() != ')') {
      return TermError(term, "found '" + set + "', expected: '('");
    }
    std::string inner = set.substr(1, set.size() - 2);
    size_t start = 0;
    for (;;) {
      size_t comma = inner.find(',', start);
      std::string v =
          Trim(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      EDL_RETURN_IF_ERROR(CheckValue(term, v));
      r.values.insert(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return r;
  }
  value = Trim(value);
  EDL_RETURN_IF_ERROR(CheckValue(term, value));
  r.values.insert(value);
  return r;
}

bool Holds(const LabelSelector::Requirement& r, const Json& labels) {
  using Op = LabelSelector::Op;
  const bool has = labels.is_object() && labels.contains(r.key) && labels.at(r.key).is_string();
  const std::string value = has ? labels.at(r.key).get<std::string>() : "";
  switch (r.op) {
    case Op::kExists: return has;
    case Op::kNotExists: return !has;
    case Op::kEquals:
    case Op::kIn: return has && r.values.count(value) > 0;
    case Op::kNotEquals:
    case Op::kNotIn: return !has || r.values.count(value) == 0;
    case Op::kGreater:
    case Op::kLess: {
      if (!has || value.empty() || value.find_first_not_of("-0123456789") != std::string::npos) {
        return false;
      }
      long long have = std::stoll(value);
      long long want = std::stoll(*r.values.begin());
      return r.op == Op::kGreater ? have > want : have < want;
    }
  }
  return false;
}

}  // namespace

Result<std::shared_ptr<const LabelSelector>> ParseLabelSelector(const std::string& text) {
  auto selector = std::make_shared<LabelSelector>();
  if (Trim(text).empty()) return std::shared_ptr<const LabelSelector>(selector);
  EDL_ASSIGN_OR_RETURN(std::vector<std::string> terms, SplitTerms(text));
  for (const std::string& term : terms) {
    EDL_ASSIGN_OR_RETURN(LabelSelector::Requirement r, ParseTerm(term));
    selector->requirements.push_back(std::move(r));
  }
  return std::shared_ptr<const LabelSelector>(selector);
}

bool Matches(const LabelSelector& selector, const Json& labels) {
  for (const auto& r : selector.requirements) {
    if (!Holds(r, labels)) return false;
  }
  return true;
}

}  // namespace edl::fakekube
