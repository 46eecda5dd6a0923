#include "data/csv_reader.h"

namespace edl::data {

CsvReader::CsvReader(std::string_view text, char delimiter, std::string file_name)
    : text_(text), delimiter_(delimiter), file_name_(std::move(file_name)) {}

std::string CsvReader::Where() const { return file_name_ + ":" + std::to_string(record_line_); }

Result<bool> CsvReader::Next() {
  const size_t n = text_.size();
  // Skip blank lines.
  while (pos_ < n) {
    if (text_[pos_] == '\n') {
      ++pos_;
      ++line_;
    } else if (text_[pos_] == '\r' && pos_ + 1 < n && text_[pos_ + 1] == '\n') {
      pos_ += 2;
      ++line_;
    } else {
      break;
    }
  }
  if (pos_ >= n) return false;
  record_line_ = line_;
  size_t used = 0;  // fields_ entries filled; the vector keeps its capacity
  auto next_field = [&]() -> std::string& {
    if (used == fields_.size()) fields_.emplace_back();
    std::string& f = fields_[used++];
    f.clear();
    return f;
  };
  while (true) {
    std::string& field = next_field();
    if (pos_ < n && text_[pos_] == '"') {
      int64_t quote_line = line_;
      ++pos_;
      while (true) {
        size_t q = text_.find('"', pos_);
        if (q == std::string_view::npos) {
          record_line_ = quote_line;
          return InvalidArgument(Where() + ": unterminated quoted field " + std::to_string(used));
        }
        for (size_t i = pos_; i < q; ++i) line_ += text_[i] == '\n';
        field.append(text_.substr(pos_, q - pos_));
        pos_ = q + 1;
        if (pos_ < n && text_[pos_] == '"') {  // "" is a literal quote
          field.push_back('"');
          ++pos_;
          continue;
        }
        break;
      }
      if (pos_ < n && text_[pos_] != delimiter_ && text_[pos_] != '\n' &&
          !(text_[pos_] == '\r' && pos_ + 1 < n && text_[pos_ + 1] == '\n')) {
        return InvalidArgument(Where() + ": unexpected character '" + std::string(1, text_[pos_]) +
                               "' after the closing quote of field " + std::to_string(used));
      }
    } else {
      size_t end = pos_;
      while (end < n && text_[end] != delimiter_ && text_[end] != '\n' &&
             !(text_[end] == '\r' && end + 1 < n && text_[end + 1] == '\n')) {
        ++end;
      }
      field.assign(text_.substr(pos_, end - pos_));
      pos_ = end;
    }
    // At a delimiter, a line end or the end of the text.
    if (pos_ < n && text_[pos_] == delimiter_) {
      ++pos_;
      continue;
    }
    if (pos_ < n) {  // line end
      pos_ += text_[pos_] == '\r' ? 2 : 1;
      ++line_;
    }
    break;
  }
  fields_.resize(used);
  return true;
}

}  // namespace edl::data
