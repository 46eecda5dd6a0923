// libFuzzer target: raw bytes -> the SQLFlow statement parser (edl sql) and
// the database URL parser (every data flag). Neither may crash, hang or
// read out of bounds on any input; errors are Status values. Built and run
// by scripts/fuzz.sh.
// fuzz-sources: sqlflow/lexer.cc sqlflow/statement.cc data/sql_url.cc base/status.cc
// fuzz-sources: base/check.cc
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/sql_url.h"
#include "sqlflow/statement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto statements = edl::sqlflow::ParseStatements(text);
  if (statements.ok()) {
    for (const auto& s : *statements) {
      if (s.text.size() > text.size()) __builtin_trap();
    }
  }
  auto url = edl::data::ParseSqlUrl(text);
  if (url.ok()) {
    auto again = edl::data::ParseSqlUrl(url->Pinned(1, 2, 3));
    if (!again.ok() || *again->rows != 1 || *again->max_key != 2) __builtin_trap();
  }
  return 0;
}
