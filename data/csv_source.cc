#include "data/csv_source.h"

#include "data/csv_reader.h"
#include "data/csv_row_decoder.h"
#include "data/file_bytes.h"

namespace edl::data {

Result<std::vector<std::string>> CsvColumnNames(const std::string& path, const CsvSpec& spec,
                                                const std::vector<std::string>* first_row,
                                                const std::string& where) {
  if (spec.header) {
    if (first_row == nullptr) return InvalidArgument(path + ": no header row (the file is empty)");
    if (!spec.column_names.empty() && spec.column_names.size() != first_row->size()) {
      return InvalidArgument(where + ": the header has " + std::to_string(first_row->size()) +
                             " columns but input.column_names names " +
                             std::to_string(spec.column_names.size()));
    }
    return spec.column_names.empty() ? *first_row : spec.column_names;
  }
  if (!spec.column_names.empty()) return spec.column_names;
  if (first_row == nullptr) return InvalidArgument(path + ": no rows (the file is empty)");
  std::vector<std::string> names;
  for (size_t i = 0; i < first_row->size(); ++i) names.push_back(std::to_string(i));
  return names;
}

Result<std::unique_ptr<ColumnSource>> CsvSource::Open(const std::string& path, const CsvSpec& spec,
                                                      LabelPolicy labels) {
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path));
  CsvReader reader(text, spec.delimiter, path);
  bool more = true;
  for (int64_t i = 0; i < spec.skip_rows && more; ++i) {
    EDL_ASSIGN_OR_RETURN(more, reader.Next());
  }
  if (more) {
    EDL_ASSIGN_OR_RETURN(more, reader.Next());
  }
  EDL_ASSIGN_OR_RETURN(
      std::vector<std::string> columns,
      CsvColumnNames(path, spec, more ? &reader.fields() : nullptr, more ? reader.Where() : path));
  if (spec.header && more) {
    EDL_ASSIGN_OR_RETURN(more, reader.Next());
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<CsvRowDecoder> decoder,
                       CsvRowDecoder::Create(path, columns, spec, labels));
  ColumnBuffer records;
  while (more) {
    Status s = decoder->Decode(reader.fields(), &records);
    if (!s.ok()) return s.WithPrefix(reader.Where());
    EDL_ASSIGN_OR_RETURN(more, reader.Next());
  }
  return std::make_unique<ColumnSource>(path, decoder->layout(), std::move(records),
                                        decoder->columns());
}

}  // namespace edl::data
