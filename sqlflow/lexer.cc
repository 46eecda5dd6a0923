#include "sqlflow/lexer.h"

#include <cctype>
#include <cstring>

namespace edl::sqlflow {

bool Token::Is(const char* keyword) const {
  if (kind != Kind::kIdentifier || text.size() != std::strlen(keyword)) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(text[i])) != keyword[i]) return false;
  }
  return true;
}

std::string Token::Describe() const {
  switch (kind) {
    case Kind::kEnd: return "the end of the statement";
    case Kind::kString: return "string '" + text + "'";
    case Kind::kQuotedIdentifier: return "\"" + text + "\"";
    default: return "'" + text + "'";
  }
}

std::string Where(const Token& t) {
  return "line " + std::to_string(t.line) + ", column " + std::to_string(t.column);
}

Result<std::vector<Token>> Lex(const std::string& text) {
  std::vector<Token> tokens;
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  auto error = [&](size_t at, const std::string& what) {
    return InvalidArgument("line " + std::to_string(line) + ", column " +
                           std::to_string(at - line_start + 1) + ": " + what);
  };
  auto newline = [&](size_t at) {
    ++line;
    line_start = at + 1;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      newline(i++);
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t start = i;
      const int start_line = line;
      const size_t start_line_at = line_start;
      i += 2;
      while (i + 1 < text.size() && !(text[i] == '*' && text[i + 1] == '/')) {
        if (text[i] == '\n') newline(i);
        ++i;
      }
      if (i + 1 >= text.size()) {
        line = start_line;
        line_start = start_line_at;
        return error(start, "a /* comment is not closed");
      }
      i += 2;
      continue;
    }
    Token t;
    t.begin = i;
    t.line = line;
    t.column = static_cast<int>(i - line_start + 1);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::Kind::kIdentifier;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                                 text[i] == '_' || text[i] == '$')) {
        ++i;
      }
      t.text = text.substr(t.begin, i - t.begin);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() &&
                std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      t.kind = Token::Kind::kNumber;
      while (i < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
        ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      }
      t.text = text.substr(t.begin, i - t.begin);
    } else if (c == '\'' || c == '"') {
      t.kind = c == '\'' ? Token::Kind::kString : Token::Kind::kQuotedIdentifier;
      ++i;
      for (;;) {
        if (i >= text.size()) {
          return error(t.begin, c == '\'' ? "a string is not closed (missing ')"
                                          : "a quoted name is not closed (missing \")");
        }
        if (text[i] == c) {
          if (i + 1 < text.size() && text[i + 1] == c) {
            t.text += c;
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') newline(i);
        t.text += text[i++];
      }
    } else if (std::strchr("(),.=;[]*<>!+-/%|:", c) != nullptr) {
      t.kind = Token::Kind::kSymbol;
      // Two-character operators stay one token.
      static const char* kPairs[] = {"<=", ">=", "<>", "!=", "||", "::"};
      t.text = std::string(1, c);
      for (const char* p : kPairs) {
        if (i + 1 < text.size() && text[i] == p[0] && text[i + 1] == p[1]) t.text = p;
      }
      i += t.text.size();
    } else {
      return error(i, std::string("unexpected character '") + c + "'");
    }
    t.end = i;
    tokens.push_back(std::move(t));
  }
  Token end;
  end.begin = end.end = text.size();
  end.line = line;
  end.column = static_cast<int>(text.size() - line_start + 1);
  tokens.push_back(end);
  return tokens;
}

}  // namespace edl::sqlflow
