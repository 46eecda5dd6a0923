#include "data/csv_row_decoder.h"

#include <charconv>
#include <cmath>

namespace edl::data {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool ParseCsvDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(*out);
}

CsvRowDecoder::CsvRowDecoder(const std::string& path, std::vector<std::string> columns,
                             const CsvSpec& spec)
    : path_(path), columns_(std::move(columns)), spec_(spec) {}

Result<std::unique_ptr<CsvRowDecoder>> CsvRowDecoder::Create(const std::string& path,
                                                             std::vector<std::string> columns,
                                                             const CsvSpec& spec,
                                                             LabelPolicy labels) {
  std::unique_ptr<CsvRowDecoder> d(new CsvRowDecoder(path, std::move(columns), spec));
  EDL_RETURN_IF_ERROR(d->Resolve(labels));
  return d;
}

Result<int64_t> CsvRowDecoder::Find(const ColumnRef& c, const std::string& role) const {
  const int64_t n = static_cast<int64_t>(columns_.size());
  if (c.by_index) {
    int64_t i = c.index < 0 ? n + c.index : c.index;
    if (i < 0 || i >= n) {
      return Bad(role + " column " + c.ToString() + " is out of range: the file has " +
                 std::to_string(n) + " columns");
    }
    return i;
  }
  int64_t found = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (columns_[i] != c.name) continue;
    if (found >= 0) return Bad(role + " column " + c.ToString() + " appears twice");
    found = i;
  }
  if (found < 0) {
    std::string list;
    for (int64_t i = 0; i < n && i < 40; ++i) list += (i ? ", " : "") + columns_[i];
    return NotFound(path_ + ": " + role + " column " + c.ToString() +
                    " is not in the header (columns: " + list + (n > 40 ? ", ..." : "") + ")");
  }
  return found;
}

Status CsvRowDecoder::Claim(int64_t column, const std::string& role) {
  if (!claimed_.emplace(column, role).second) {
    return Bad("column '" + columns_[column] + "' is used as " + claimed_[column] + " and as " +
               role);
  }
  return Status::Ok();
}

Status CsvRowDecoder::Resolve(LabelPolicy labels) {
  ColumnLayout& l = layout_;
  if (spec_.has_label) {
    Result<int64_t> label = Find(spec_.label, "label");
    if (label.ok()) {
      label_column_ = *label;
      EDL_RETURN_IF_ERROR(Claim(label_column_, "the label"));
      l.has_labels = true;
      l.float_labels = spec_.label_type == LabelType::kFloat;
      for (size_t i = 0; i < spec_.label_vocabulary.size(); ++i) {
        label_vocabulary_[spec_.label_vocabulary[i]] = static_cast<int64_t>(i);
      }
    } else if (label.status().code() != StatusCode::kNotFound || labels == LabelPolicy::kRequired) {
      return label.status();
    }
  }
  const IdsPlan ids = PlanIds(spec_.categorical, spec_.categorical_layout);
  l.concat_ids = ids.concat;
  offsets_ = ids.offsets;
  for (const CategoricalColumn& c : spec_.categorical) {
    EDL_ASSIGN_OR_RETURN(int64_t i, Find(c.column, "categorical"));
    EDL_RETURN_IF_ERROR(Claim(i, "a categorical"));
    categorical_columns_.push_back(i);
    encoders_.emplace_back(c);
    if (!l.concat_ids) l.inputs.push_back({columns_[i], tensor::DType::kInt64, {}, c.NumIds()});
  }
  if (spec_.numeric_all) {
    for (int64_t i = 0; i < static_cast<int64_t>(columns_.size()); ++i) {
      if (!claimed_.count(i)) numeric_columns_.push_back(i);
    }
  } else {
    for (const ColumnRef& c : spec_.numeric) {
      EDL_ASSIGN_OR_RETURN(int64_t i, Find(c, "numeric"));
      EDL_RETURN_IF_ERROR(Claim(i, "a numeric"));
      numeric_columns_.push_back(i);
    }
  }
  for (int64_t i : numeric_columns_) {
    auto it = spec_.normalize.find(columns_[i]);
    norms_.push_back(it == spec_.normalize.end() ? Normalization{} : it->second);
  }
  for (const auto& [name, norm] : spec_.normalize) {
    bool used = false;
    for (int64_t i : numeric_columns_) used |= columns_[i] == name;
    if (!used) return Bad("input.normalize names '" + name + "', which is not a numeric column");
  }
  l.num_numeric = static_cast<int64_t>(numeric_columns_.size());
  l.num_categorical = static_cast<int64_t>(categorical_columns_.size());
  if (l.num_numeric > 0) {
    l.inputs.insert(l.inputs.begin(), {"numeric", tensor::DType::kFloat32, {l.num_numeric}, 0});
  }
  if (l.concat_ids && l.num_categorical > 0) {
    l.inputs.push_back({"categorical", tensor::DType::kInt64, {l.num_categorical}, ids.num_ids});
  }
  if (l.inputs.empty()) return Bad("no input columns (only a label)");
  return Status::Ok();
}

namespace {

// What a numeric cell holds.
enum class Cell { kNumber, kEmpty, kBad };

Cell ParseCell(std::string_view text, double* x) {
  if (ParseCsvDouble(text, x)) return Cell::kNumber;
  return Trim(text).empty() ? Cell::kEmpty : Cell::kBad;
}

// A CSV row's cells: text only.
struct TextCells {
  const std::vector<std::string_view>& fields;
  size_t size() const { return fields.size(); }
  std::string_view text(int64_t c) const { return fields[c]; }
  Cell Number(int64_t c, double* x) const { return ParseCell(fields[c], x); }
  std::string Shown(int64_t c) const { return std::string(fields[c]); }
};

// A database row's cells: numbers as they came, NULL as empty.
struct TypedCells {
  const TypedRow& row;
  size_t size() const { return row.size; }
  std::string_view text(int64_t c) const { return row.text[c]; }
  Cell Number(int64_t c, double* x) const {
    if (row.is_null[c]) return Cell::kEmpty;
    if (!row.is_number[c]) return ParseCell(row.text[c], x);
    *x = row.numbers[c];
    return std::isfinite(*x) ? Cell::kNumber : Cell::kBad;
  }
  std::string Shown(int64_t c) const {
    if (!row.is_number[c] || !row.text[c].empty()) return std::string(row.text[c]);
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), row.numbers[c]);
    return std::string(buf, r.ptr);
  }
};

}  // namespace

Status CsvRowDecoder::Decode(const std::vector<std::string>& fields, ColumnBuffer* out) const {
  thread_local std::vector<std::string_view> views;
  views.assign(fields.begin(), fields.end());
  return Decode(views, out);
}

Status CsvRowDecoder::Decode(const std::vector<std::string_view>& fields, ColumnBuffer* out) const {
  return out->Append([&](ColumnBuffer* b) { return DecodeInto(TextCells{fields}, b); });
}

Status CsvRowDecoder::Decode(const TypedRow& row, ColumnBuffer* out) const {
  return out->Append([&](ColumnBuffer* b) { return DecodeInto(TypedCells{row}, b); });
}

bool CsvRowDecoder::ReadsAsNumber(int64_t c) const {
  for (int64_t n : numeric_columns_) {
    if (n == c) return true;
  }
  return c == label_column_ && (layout_.float_labels || label_vocabulary_.empty());
}

template <typename Cells>
Status CsvRowDecoder::DecodeInto(const Cells& cells, ColumnBuffer* out) const {
  if (cells.size() != columns_.size()) {
    return InvalidArgument("expected " + std::to_string(columns_.size()) + " fields, got " +
                           std::to_string(cells.size()));
  }
  for (size_t k = 0; k < numeric_columns_.size(); ++k) {
    const int64_t c = numeric_columns_[k];
    double x;
    const Cell cell = cells.Number(c, &x);
    if (cell != Cell::kNumber) {
      if (cell == Cell::kBad || !spec_.missing_value) return CellError(cells.Shown(c), c);
      x = *spec_.missing_value;
    }
    out->numeric.push_back(static_cast<float>((x - norms_[k].mean) / norms_[k].std));
  }
  for (size_t k = 0; k < categorical_columns_.size(); ++k) {
    const std::string_view value = cells.text(categorical_columns_[k]);
    const int64_t id = encoders_[k].Id(value);
    if (id < 0) {
      return InvalidArgument("column '" + columns_[categorical_columns_[k]] +
                             "': " + encoders_[k].RefusalMessage(value));
    }
    out->ids.push_back(id + offsets_[k]);
  }
  if (!layout_.has_labels) return Status::Ok();
  double y;
  if (layout_.float_labels) {
    if (cells.Number(label_column_, &y) != Cell::kNumber)
      return CellError(cells.Shown(label_column_), label_column_);
    out->float_labels.push_back(static_cast<float>(y));
    return Status::Ok();
  }
  if (!label_vocabulary_.empty()) {
    const std::string_view label = cells.text(label_column_);
    auto it = label_vocabulary_.find(std::string(label));
    if (it == label_vocabulary_.end()) {
      return InvalidArgument("label '" + std::string(label) + "' is not in input.label_vocabulary");
    }
    out->int_labels.push_back(it->second);
    return Status::Ok();
  }
  if (cells.Number(label_column_, &y) != Cell::kNumber || y != std::floor(y) ||
      std::fabs(y) > 9e15) {
    return InvalidArgument("label column '" + columns_[label_column_] + "': cannot parse '" +
                           cells.Shown(label_column_) +
                           "' as an integer class (use label_type \"float\" for "
                           "regression or label_vocabulary for names)");
  }
  out->int_labels.push_back(static_cast<int64_t>(y));
  return Status::Ok();
}

Status CsvRowDecoder::CellError(std::string_view v, int64_t column) const {
  std::string what = Trim(v).empty() ? "empty value (set input.missing_value to fill empty fields)"
                                     : "cannot parse '" + std::string(v) + "' as a number";
  return InvalidArgument("column '" + columns_[column] + "': " + what);
}

}  // namespace edl::data
