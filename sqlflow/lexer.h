// Lexer: SQLFlow statement text as tokens, each with where it starts (line
// and column, 1-based, for errors) and its byte range (so that the SELECT
// part is kept as written). Identifiers may be "double quoted"; strings
// are 'single quoted' ('' inside is one quote); -- and /* */ comments are
// skipped. Plain values.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace edl::sqlflow {

struct Token {
  enum class Kind { kIdentifier, kQuotedIdentifier, kNumber, kString, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;  // identifiers as written (quoted: unquoted), strings unquoted
  size_t begin = 0;  // byte range in the statement text
  size_t end = 0;
  int line = 1;
  int column = 1;

  // Case-insensitive keyword match of an unquoted identifier.
  bool Is(const char* keyword) const;
  bool IsSymbol(const char* symbol) const { return kind == Kind::kSymbol && text == symbol; }
  // "'TRAIN'", "end of input", "string 'x'": what an error says was found.
  std::string Describe() const;
};

// "line L, column C" of a token.
std::string Where(const Token& t);

// Tokens of `text` ending with a kEnd token. Errors name the line and
// column: an unterminated string, quoted identifier or comment, a character
// that starts no token.
Result<std::vector<Token>> Lex(const std::string& text);

}  // namespace edl::sqlflow
