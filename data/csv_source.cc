#include "data/csv_source.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <unordered_map>

#include "data/categorical.h"
#include "data/csv_reader.h"
#include "data/file_bytes.h"

namespace edl::data {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// Parses a whole field as a finite double.
bool ParseDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(*out);
}

}  // namespace

// Resolves the spec's columns against the header, then parses the rows.
class CsvSource::Builder {
 public:
  Builder(const std::string& path, const CsvSpec& spec, CsvSource* s)
      : path_(path), spec_(spec), s_(s) {}

  Status Run(LabelPolicy labels) {
    EDL_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path_));
    CsvReader reader(text, spec_.delimiter, path_);
    for (int64_t i = 0; i < spec_.skip_rows; ++i) {
      EDL_ASSIGN_OR_RETURN(bool more, reader.Next());
      if (!more) break;
    }
    EDL_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (spec_.header) {
      if (!more)
        return InvalidArgument(path_ + ": no header row (the file is empty)");
      s_->columns_ = reader.fields();
      if (!spec_.column_names.empty()) {
        if (spec_.column_names.size() != s_->columns_.size()) {
          return InvalidArgument(reader.Where() + ": the header has " +
                                 std::to_string(s_->columns_.size()) +
                                 " columns but input.column_names names " +
                                 std::to_string(spec_.column_names.size()));
        }
        s_->columns_ = spec_.column_names;
      }
      EDL_ASSIGN_OR_RETURN(more, reader.Next());
    } else if (!spec_.column_names.empty()) {
      s_->columns_ = spec_.column_names;
    } else {
      if (!more)
        return InvalidArgument(path_ + ": no rows (the file is empty)");
      for (size_t i = 0; i < reader.fields().size(); ++i) {
        s_->columns_.push_back(std::to_string(i));
      }
    }
    EDL_RETURN_IF_ERROR(ResolveColumns(labels));
    while (more) {
      EDL_RETURN_IF_ERROR(ParseRow(reader));
      ++s_->num_records_;
      EDL_ASSIGN_OR_RETURN(more, reader.Next());
    }
    return Status::Ok();
  }

 private:
  Status Bad(const std::string& what) const {
    return InvalidArgument(path_ + ": " + what);
  }

  // The index of a column; NotFound when a named column is absent.
  Result<int64_t> Find(const ColumnRef& c, const std::string& role) const {
    const auto& cols = s_->columns_;
    int64_t n = static_cast<int64_t>(cols.size());
    if (c.by_index) {
      int64_t i = c.index < 0 ? n + c.index : c.index;
      if (i < 0 || i >= n) {
        return Bad(role + " column " + c.ToString() +
                   " is out of range: the file has " + std::to_string(n) +
                   " columns");
      }
      return i;
    }
    int64_t found = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (cols[i] != c.name) continue;
      if (found >= 0)
        return Bad(role + " column " + c.ToString() + " appears twice");
      found = i;
    }
    if (found < 0) {
      std::string list;
      for (int64_t i = 0; i < n && i < 40; ++i)
        list += (i ? ", " : "") + cols[i];
      return NotFound(path_ + ": " + role + " column " + c.ToString() +
                      " is not in the header (columns: " + list +
                      (n > 40 ? ", ..." : "") + ")");
    }
    return found;
  }

  Status Claim(int64_t column, const std::string& role) {
    if (!claimed_.emplace(column, role).second) {
      return Bad("column '" + s_->columns_[column] + "' is used as " +
                 claimed_[column] + " and as " + role);
    }
    return Status::Ok();
  }

  Status ResolveColumns(LabelPolicy labels) {
    if (spec_.has_label) {
      Result<int64_t> label = Find(spec_.label, "label");
      if (label.ok()) {
        label_column_ = *label;
        EDL_RETURN_IF_ERROR(Claim(label_column_, "the label"));
        s_->has_labels_ = true;
        s_->float_labels_ = spec_.label_type == LabelType::kFloat;
        for (size_t i = 0; i < spec_.label_vocabulary.size(); ++i) {
          label_vocabulary_[spec_.label_vocabulary[i]] =
              static_cast<int64_t>(i);
        }
      } else if (label.status().code() != StatusCode::kNotFound ||
                 labels == LabelPolicy::kRequired) {
        return label.status();
      }
    }
    int64_t id_offset = 0;
    s_->concat_ids_ =
        spec_.categorical_layout == CategoricalLayout::kConcatWithOffsets;
    for (const CategoricalColumn& c : spec_.categorical) {
      EDL_ASSIGN_OR_RETURN(int64_t i, Find(c.column, "categorical"));
      EDL_RETURN_IF_ERROR(Claim(i, "a categorical"));
      categorical_columns_.push_back(i);
      encoders_.emplace_back(c);
      offsets_.push_back(s_->concat_ids_ ? id_offset : 0);
      id_offset += c.NumIds();
      if (!s_->concat_ids_) {
        s_->inputs_.push_back(
            {s_->columns_[i], tensor::DType::kInt64, {}, c.NumIds()});
      }
    }
    if (spec_.numeric_all) {
      for (int64_t i = 0; i < static_cast<int64_t>(s_->columns_.size()); ++i) {
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
      auto it = spec_.normalize.find(s_->columns_[i]);
      norms_.push_back(it == spec_.normalize.end() ? Normalization{}
                                                   : it->second);
    }
    for (const auto& [name, norm] : spec_.normalize) {
      bool used = false;
      for (int64_t i : numeric_columns_) used |= s_->columns_[i] == name;
      if (!used)
        return Bad("input.normalize names '" + name +
                   "', which is not a numeric column");
    }
    s_->num_numeric_ = static_cast<int64_t>(numeric_columns_.size());
    s_->num_categorical_ = static_cast<int64_t>(categorical_columns_.size());
    if (s_->num_numeric_ > 0) {
      s_->inputs_.insert(
          s_->inputs_.begin(),
          {"numeric", tensor::DType::kFloat32, {s_->num_numeric_}, 0});
    }
    if (s_->concat_ids_ && s_->num_categorical_ > 0) {
      s_->inputs_.push_back({"categorical",
                             tensor::DType::kInt64,
                             {s_->num_categorical_},
                             id_offset});
    }
    if (s_->inputs_.empty()) return Bad("no input columns (only a label)");
    return Status::Ok();
  }

  Status ParseRow(const CsvReader& reader) {
    const auto& fields = reader.fields();
    if (fields.size() != s_->columns_.size()) {
      return InvalidArgument(reader.Where() + ": expected " +
                             std::to_string(s_->columns_.size()) +
                             " fields, got " + std::to_string(fields.size()));
    }
    for (size_t k = 0; k < numeric_columns_.size(); ++k) {
      int64_t c = numeric_columns_[k];
      double x;
      if (!ParseDouble(fields[c], &x)) {
        if (Trim(fields[c]).empty() && spec_.missing_value) {
          x = *spec_.missing_value;
        } else {
          return CellError(reader, c);
        }
      }
      s_->numeric_.push_back(
          static_cast<float>((x - norms_[k].mean) / norms_[k].std));
    }
    for (size_t k = 0; k < categorical_columns_.size(); ++k) {
      s_->ids_.push_back(encoders_[k].Id(fields[categorical_columns_[k]]) +
                         offsets_[k]);
    }
    if (!s_->has_labels_) return Status::Ok();
    const std::string& label = fields[label_column_];
    if (s_->float_labels_) {
      double y;
      if (!ParseDouble(label, &y)) return CellError(reader, label_column_);
      s_->float_labels_v_.push_back(static_cast<float>(y));
      return Status::Ok();
    }
    if (!label_vocabulary_.empty()) {
      auto it = label_vocabulary_.find(label);
      if (it == label_vocabulary_.end()) {
        return InvalidArgument(reader.Where() + ": label '" + label +
                               "' is not in input.label_vocabulary");
      }
      s_->int_labels_.push_back(it->second);
      return Status::Ok();
    }
    double y;
    if (!ParseDouble(label, &y) || y != std::floor(y) || std::fabs(y) > 9e15) {
      return InvalidArgument(
          reader.Where() + ": label column '" + s_->columns_[label_column_] +
          "': cannot parse '" + label +
          "' as an integer class (use label_type \"float\" for "
          "regression or label_vocabulary for names)");
    }
    s_->int_labels_.push_back(static_cast<int64_t>(y));
    return Status::Ok();
  }

  Status CellError(const CsvReader& reader, int64_t column) const {
    const std::string& v = reader.fields()[column];
    std::string what =
        Trim(v).empty()
            ? "empty value (set input.missing_value to fill empty fields)"
            : "cannot parse '" + v + "' as a number";
    return InvalidArgument(reader.Where() + ": column '" +
                           s_->columns_[column] + "': " + what);
  }

  const std::string& path_;
  const CsvSpec& spec_;
  CsvSource* s_;
  std::unordered_map<int64_t, std::string> claimed_;  // column -> its role
  int64_t label_column_ = -1;
  std::unordered_map<std::string, int64_t> label_vocabulary_;
  std::vector<int64_t> numeric_columns_;
  std::vector<Normalization> norms_;
  std::vector<int64_t> categorical_columns_;
  std::vector<CategoricalEncoder> encoders_;
  std::vector<int64_t> offsets_;
};

Result<std::unique_ptr<CsvSource>> CsvSource::Open(const std::string& path,
                                                   const CsvSpec& spec,
                                                   LabelPolicy labels) {
  std::unique_ptr<CsvSource> s(new CsvSource());
  s->name_ = path;
  Builder builder(path, spec, s.get());
  EDL_RETURN_IF_ERROR(builder.Run(labels));
  return s;
}

Result<Examples> CsvSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  const int64_t n = static_cast<int64_t>(indices.size());
  Examples out;
  if (num_numeric_ > 0) {
    tensor::Tensor x =
        tensor::Tensor::Empty({n, num_numeric_}, tensor::DType::kFloat32);
    float* dst = x.f32();
    for (int64_t r = 0; r < n; ++r) {
      std::copy_n(numeric_.data() + indices[r] * num_numeric_, num_numeric_,
                  dst + r * num_numeric_);
    }
    out.inputs.push_back(std::move(x));
  }
  const int64_t k = num_categorical_;
  if (concat_ids_ && k > 0) {
    tensor::Tensor ids = tensor::Tensor::Empty({n, k}, tensor::DType::kInt64);
    int64_t* dst = ids.i64();
    for (int64_t r = 0; r < n; ++r) {
      std::copy_n(ids_.data() + indices[r] * k, k, dst + r * k);
    }
    out.inputs.push_back(std::move(ids));
  } else {
    for (int64_t c = 0; c < k; ++c) {
      tensor::Tensor ids = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
      int64_t* dst = ids.i64();
      for (int64_t r = 0; r < n; ++r) dst[r] = ids_[indices[r] * k + c];
      out.inputs.push_back(std::move(ids));
    }
  }
  if (has_labels_) {
    if (float_labels_) {
      out.labels = tensor::Tensor::Empty({n}, tensor::DType::kFloat32);
      float* y = out.labels.f32();
      for (int64_t r = 0; r < n; ++r) y[r] = float_labels_v_[indices[r]];
    } else {
      out.labels = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
      int64_t* y = out.labels.i64();
      for (int64_t r = 0; r < n; ++r) y[r] = int_labels_[indices[r]];
    }
  }
  return out;
}

}  // namespace edl::data
