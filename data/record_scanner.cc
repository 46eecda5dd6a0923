#include "data/record_scanner.h"

#include <algorithm>
#include <cstring>

#include "data/csv_reader.h"

namespace edl::data {

Result<size_t> CsvFieldCount(const std::string& row, char delimiter) {
  if (std::memchr(row.data(), '"', row.size()) == nullptr) {
    return static_cast<size_t>(std::count(row.begin(), row.end(), delimiter)) + 1;
  }
  // The reader's errors start "<name>:<line>: "; the caller says where.
  CsvReader reader(row, delimiter, "");
  Result<bool> got = reader.Next();
  if (!got.ok()) {
    const std::string& m = got.status().message();
    const size_t colon = m.find(": ");
    return InvalidArgument(colon == std::string::npos ? m : m.substr(colon + 2));
  }
  return *got ? reader.fields().size() : size_t{0};
}

Result<std::unique_ptr<RecordScanner>> RecordScanner::Open(const RecordIndex& index,
                                                           uint64_t first) {
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, RecordReader::Open(index, first));
  std::unique_ptr<RecordScanner> s(new RecordScanner(index, std::move(reader)));
  if (index.format == RecordFormat::kCsvRows && index.num_records > 0) {
    // The first row, by a reader of its own.
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> head, RecordReader::Open(index, 0));
    std::string row;
    EDL_ASSIGN_OR_RETURN(bool got, head->Next(&row));
    if (got) {
      Result<size_t> fields = CsvFieldCount(row, index.delimiter);
      if (!fields.ok()) return fields.status().WithPrefix(index.path + ": row 1 at byte 0");
      s->csv_fields_ = *fields;
    }
  }
  return s;
}

std::string RecordScanner::Where() const {
  const bool csv = index_.format == RecordFormat::kCsvRows;
  return index_.path +
         (csv ? ": row " + std::to_string(number_ + 1) : ": record " + std::to_string(number_)) +
         " at byte " + std::to_string(offset_);
}

Result<bool> RecordScanner::Next() {
  number_ = reader_->record();
  offset_ = reader_->offset();
  // RecordReader's errors (a payload checksum, framing) name the record.
  EDL_ASSIGN_OR_RETURN(bool got, reader_->Next(&record_));
  if (!got) return false;
  if (index_.format == RecordFormat::kCsvRows) {
    EDL_RETURN_IF_ERROR(CheckCsvRow());
    return true;
  }
  // The message is built only for a record that does not parse.
  static const std::string kNowhere;
  if (examples_.Parse(record_, kNowhere).ok()) return true;
  Status bad = examples_.Parse(record_, Where());
  if (bad.ok()) return true;  // not reached: parsing is deterministic
  return bad;
}

Status RecordScanner::CheckCsvRow() const {
  Result<size_t> fields = CsvFieldCount(record_, index_.delimiter);
  if (!fields.ok()) return fields.status().WithPrefix(Where());
  if (*fields != csv_fields_) {
    return InvalidArgument(Where() + ": expected " + std::to_string(csv_fields_) +
                           " fields (as the first row has), got " + std::to_string(*fields));
  }
  return Status::Ok();
}

}  // namespace edl::data
