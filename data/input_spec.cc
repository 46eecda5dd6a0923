#include "data/input_spec.h"

#include <nlohmann/json.hpp>
#include <set>

#include "data/image_spec.h"

namespace edl::data {
namespace {

using nlohmann::json;

const std::set<std::string> kIdxFields = {"scale", "offset", "shape", "labels_path"};
const std::set<std::string> kCsvFields = {"delimiter",        "header",      "skip_rows",
                                          "column_names",     "label",       "label_type",
                                          "label_vocabulary", "numeric",     "normalize",
                                          "missing_value",    "categorical", "categorical_layout",
                                          "lengths"};
// CSV fields that mean nothing for TFRecord files.
const std::set<std::string> kCsvOnlyFields = {"delimiter", "header", "skip_rows", "column_names"};

// Field access with errors of the form "<where>.field: must be ...".
class Fields {
 public:
  explicit Fields(std::string where) : where_(std::move(where)) {}

  Status Bad(const std::string& field, const std::string& what) const {
    return InvalidArgument(where_ + "." + field + ": " + what);
  }
  Result<double> Number(const json& v, const std::string& field) const {
    if (!v.is_number()) return Bad(field, "must be a number, got " + v.dump());
    return v.get<double>();
  }
  Result<int64_t> Int(const json& v, const std::string& field) const {
    if (!v.is_number_integer()) {
      return Bad(field, "must be an integer, got " + v.dump());
    }
    return v.get<int64_t>();
  }
  Result<std::string> String(const json& v, const std::string& field) const {
    if (!v.is_string()) return Bad(field, "must be a string, got " + v.dump());
    return v.get<std::string>();
  }
  Result<bool> Bool(const json& v, const std::string& field) const {
    if (!v.is_boolean()) return Bad(field, "must be true or false, got " + v.dump());
    return v.get<bool>();
  }
  Result<std::vector<std::string>> Strings(const json& v, const std::string& field) const {
    if (!v.is_array()) return Bad(field, "must be a list of strings, got " + v.dump());
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
      EDL_ASSIGN_OR_RETURN(std::string s, String(v[i], field + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(s));
    }
    return out;
  }
  Result<ColumnRef> Column(const json& v, const std::string& field) const {
    if (v.is_string()) return ColumnRef::Named(v.get<std::string>());
    if (v.is_number_integer()) return ColumnRef::Index(v.get<int64_t>());
    return Bad(field, "must be a column name or a 0-based column index, got " + v.dump());
  }

 private:
  std::string where_;
};

Status ParseCategorical(const Fields& f, const json& v, const std::string& field,
                        CategoricalColumn* out) {
  if (!v.is_object()) {
    return f.Bad(field,
                 "must be an object {\"column\": ..., \"hash_buckets\": N}, "
                 "{\"column\": ..., \"num_buckets\": N} "
                 "or {\"column\": ..., \"vocabulary\": [...]}, got " +
                     v.dump());
  }
  bool has_column = false, has_vocabulary = false;
  for (const auto& [key, value] : v.items()) {
    if (key == "column") {
      EDL_ASSIGN_OR_RETURN(out->column, f.Column(value, field + ".column"));
      has_column = true;
    } else if (key == "hash_buckets") {
      EDL_ASSIGN_OR_RETURN(out->hash_buckets, f.Int(value, field + ".hash_buckets"));
      if (out->hash_buckets <= 0) {
        return f.Bad(field + ".hash_buckets", "must be positive, got " + value.dump());
      }
    } else if (key == "num_buckets") {
      EDL_ASSIGN_OR_RETURN(out->num_buckets, f.Int(value, field + ".num_buckets"));
      if (out->num_buckets <= 0) {
        return f.Bad(field + ".num_buckets", "must be positive, got " + value.dump());
      }
    } else if (key == "vocabulary") {
      EDL_ASSIGN_OR_RETURN(out->vocabulary, f.Strings(value, field + ".vocabulary"));
      has_vocabulary = true;
    } else if (key == "boundaries") {
      if (!value.is_array() || value.empty()) {
        return f.Bad(field + ".boundaries",
                     "must be a non-empty list of numbers, got " + value.dump());
      }
      for (size_t i = 0; i < value.size(); ++i) {
        EDL_ASSIGN_OR_RETURN(double b, f.Number(value[i], field + ".boundaries"));
        if (!out->boundaries.empty() && b <= out->boundaries.back()) {
          return f.Bad(field + ".boundaries", "must increase strictly, got " + value.dump());
        }
        out->boundaries.push_back(b);
      }
    } else {
      return f.Bad(field + "." + key,
                   "unknown field (expected column, "
                   "hash_buckets, num_buckets, vocabulary or boundaries)");
    }
  }
  if (!has_column) return f.Bad(field, "missing \"column\"");
  if (int(has_vocabulary) + int(out->hash_buckets > 0) + int(out->num_buckets > 0) +
          int(!out->boundaries.empty()) !=
      1) {
    return f.Bad(field,
                 "needs exactly one of \"hash_buckets\", \"num_buckets\", \"vocabulary\" "
                 "and \"boundaries\"");
  }
  std::set<std::string> seen;
  for (const std::string& word : out->vocabulary) {
    if (!seen.insert(word).second) {
      return f.Bad(field + ".vocabulary", "\"" + word + "\" appears twice");
    }
  }
  return Status::Ok();
}

Status ParseCsvField(const Fields& f, const std::string& key, const json& v, CsvSpec* csv) {
  if (key == "delimiter") {
    EDL_ASSIGN_OR_RETURN(std::string d, f.String(v, key));
    if (d.size() != 1 || d[0] == '"' || d[0] == '\n' || d[0] == '\r') {
      return f.Bad(key,
                   "must be one character other than a quote or line end, "
                   "got " +
                       v.dump());
    }
    csv->delimiter = d[0];
  } else if (key == "header") {
    EDL_ASSIGN_OR_RETURN(csv->header, f.Bool(v, key));
  } else if (key == "skip_rows") {
    EDL_ASSIGN_OR_RETURN(csv->skip_rows, f.Int(v, key));
    if (csv->skip_rows < 0) return f.Bad(key, "must be >= 0, got " + v.dump());
  } else if (key == "column_names") {
    EDL_ASSIGN_OR_RETURN(csv->column_names, f.Strings(v, key));
  } else if (key == "label") {
    if (v.is_null()) {
      csv->has_label = false;
    } else {
      EDL_ASSIGN_OR_RETURN(csv->label, f.Column(v, key));
    }
  } else if (key == "label_type") {
    EDL_ASSIGN_OR_RETURN(std::string t, f.String(v, key));
    if (t == "int") {
      csv->label_type = LabelType::kInt;
    } else if (t == "float") {
      csv->label_type = LabelType::kFloat;
    } else {
      return f.Bad(key, "must be \"int\" (classes) or \"float\" (regression), got " + v.dump());
    }
  } else if (key == "label_vocabulary") {
    EDL_ASSIGN_OR_RETURN(csv->label_vocabulary, f.Strings(v, key));
  } else if (key == "numeric") {
    if (!v.is_array()) return f.Bad(key, "must be a list of columns, got " + v.dump());
    csv->numeric_all = false;
    for (size_t i = 0; i < v.size(); ++i) {
      EDL_ASSIGN_OR_RETURN(ColumnRef c, f.Column(v[i], key + "[" + std::to_string(i) + "]"));
      csv->numeric.push_back(std::move(c));
    }
  } else if (key == "normalize") {
    if (!v.is_object()) {
      return f.Bad(key, "must be an object {\"column\": {\"mean\": m, \"std\": s}}");
    }
    for (const auto& [column, n] : v.items()) {
      std::string field = key + "." + column;
      if (!n.is_object()) return f.Bad(field, "must be {\"mean\": m, \"std\": s}");
      Normalization norm;
      for (const auto& [k, x] : n.items()) {
        if (k == "mean") {
          EDL_ASSIGN_OR_RETURN(norm.mean, f.Number(x, field + ".mean"));
        } else if (k == "std") {
          EDL_ASSIGN_OR_RETURN(norm.std, f.Number(x, field + ".std"));
          if (!(norm.std > 0)) return f.Bad(field + ".std", "must be > 0, got " + x.dump());
        } else {
          return f.Bad(field + "." + k, "unknown field (expected mean or std)");
        }
      }
      csv->normalize[column] = norm;
    }
  } else if (key == "missing_value") {
    EDL_ASSIGN_OR_RETURN(double m, f.Number(v, key));
    csv->missing_value = m;
  } else if (key == "categorical") {
    if (!v.is_array()) return f.Bad(key, "must be a list of objects, got " + v.dump());
    for (size_t i = 0; i < v.size(); ++i) {
      CategoricalColumn c;
      EDL_RETURN_IF_ERROR(ParseCategorical(f, v[i], key + "[" + std::to_string(i) + "]", &c));
      csv->categorical.push_back(std::move(c));
    }
  } else if (key == "lengths") {
    if (!v.is_object()) {
      return f.Bad(key, "must be an object {\"feature\": values per record}, got " + v.dump());
    }
    for (const auto& [name, n] : v.items()) {
      EDL_ASSIGN_OR_RETURN(int64_t len, f.Int(n, key + "." + name));
      if (len <= 0) return f.Bad(key + "." + name, "must be positive, got " + n.dump());
      csv->lengths[name] = len;
    }
  } else if (key == "categorical_layout") {
    EDL_ASSIGN_OR_RETURN(std::string t, f.String(v, key));
    if (t == "separate") {
      csv->categorical_layout = CategoricalLayout::kSeparate;
    } else if (t == "concat_with_offsets") {
      csv->categorical_layout = CategoricalLayout::kConcatWithOffsets;
    } else if (t == "concat") {
      csv->categorical_layout = CategoricalLayout::kConcat;
    } else {
      return f.Bad(key,
                   "must be \"separate\", \"concat_with_offsets\" or \"concat\", got " + v.dump());
    }
  }
  return Status::Ok();
}

Status ParseIdxField(const Fields& f, const std::string& key, const json& v, IdxSpec* idx) {
  if (key == "scale") {
    EDL_ASSIGN_OR_RETURN(idx->scale, f.Number(v, key));
  } else if (key == "offset") {
    EDL_ASSIGN_OR_RETURN(idx->offset, f.Number(v, key));
  } else if (key == "shape") {
    if (!v.is_array() || v.empty()) {
      return f.Bad(key, "must be a non-empty list of positive integers, got " + v.dump());
    }
    idx->shape.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      EDL_ASSIGN_OR_RETURN(int64_t d, f.Int(v[i], key + "[" + std::to_string(i) + "]"));
      if (d <= 0) return f.Bad(key, "dimensions must be positive, got " + v.dump());
      idx->shape.push_back(d);
    }
  } else if (key == "labels_path") {
    EDL_ASSIGN_OR_RETURN(idx->labels_path, f.String(v, key));
  }
  return Status::Ok();
}

}  // namespace

std::string ColumnRef::ToString() const {
  return by_index ? "#" + std::to_string(index) : "'" + name + "'";
}

Result<InputSpec> InputSpecFromJson(const std::string& json_text, const std::string& where) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    return InvalidArgument(where + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) {
    return InvalidArgument(where + ": must be a JSON object, got " + j.dump());
  }
  Fields f(where);
  InputSpec spec;
  std::string idx_key, csv_key;  // a field of each kind seen, for messages
  if (j.contains("format")) {
    EDL_ASSIGN_OR_RETURN(std::string format, f.String(j["format"], "format"));
    if (format == "idx") {
      spec.format = DataFormat::kIdx;
    } else if (format == "csv") {
      spec.format = DataFormat::kCsv;
    } else if (format == "tfrecord") {
      spec.format = DataFormat::kTfRecord;
    } else if (format == "images") {
      spec.format = DataFormat::kImages;
    } else if (format != "auto") {
      return f.Bad(
          "format",
          "must be \"idx\", \"csv\", \"tfrecord\", \"images\" or \"auto\", got \"" + format + "\"");
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "format") continue;
    if (key == "image") {
      if (spec.format != DataFormat::kAuto && spec.format != DataFormat::kImages &&
          spec.format != DataFormat::kTfRecord) {
        return f.Bad(key,
                     "is for image files (format \"images\") and TFRecord files of encoded "
                     "images (format \"tfrecord\")");
      }
      EDL_ASSIGN_OR_RETURN(spec.image, ImageSpecFromJson(value, where + ".image"));
      continue;
    }
    if (spec.format == DataFormat::kImages) {
      return f.Bad(key, "is not a field of image files (format \"images\" takes only \"image\")");
    }
    if (key == "query" || key == "key") {
      if (spec.format == DataFormat::kIdx) {
        return f.Bad(key, "is a database field, but format is \"idx\"");
      }
      EDL_ASSIGN_OR_RETURN(std::string text, f.String(value, key));
      (key == "query" ? spec.query : spec.key) = text;
      csv_key = key;
      continue;
    }
    if (kIdxFields.count(key)) {
      if (spec.format == DataFormat::kCsv || spec.format == DataFormat::kTfRecord) {
        return f.Bad(key, std::string("is an IDX field, but format is \"") +
                              (spec.format == DataFormat::kCsv ? "csv" : "tfrecord") + "\"");
      }
      idx_key = key;
      EDL_RETURN_IF_ERROR(ParseIdxField(f, key, value, &spec.idx));
    } else if (kCsvFields.count(key)) {
      if (spec.format == DataFormat::kIdx) {
        return f.Bad(key, "is a CSV field, but format is \"idx\"");
      }
      if (spec.format == DataFormat::kTfRecord && kCsvOnlyFields.count(key)) {
        return f.Bad(key, "is a CSV field, but format is \"tfrecord\" (features have names)");
      }
      csv_key = key;
      EDL_RETURN_IF_ERROR(ParseCsvField(f, key, value, &spec.csv));
    } else {
      return f.Bad(key,
                   "unknown field (expected format, image, IDX fields scale, offset, "
                   "shape, labels_path or CSV fields delimiter, header, "
                   "skip_rows, column_names, label, label_type, "
                   "label_vocabulary, numeric, normalize, missing_value, "
                   "categorical, categorical_layout, lengths, or database fields query, "
                   "key)");
    }
  }
  if (!idx_key.empty() && !csv_key.empty()) {
    return InvalidArgument(where + ": mixes IDX field \"" + idx_key + "\" with CSV field \"" +
                           csv_key + "\"");
  }
  if (spec.format == DataFormat::kAuto) {
    if (!idx_key.empty()) spec.format = DataFormat::kIdx;
    if (!csv_key.empty()) spec.format = DataFormat::kCsv;
    if (spec.has_image()) {
      if (!idx_key.empty() || !csv_key.empty()) {
        return f.Bad("image",
                     "with IDX or CSV fields needs \"format\": \"tfrecord\" (encoded "
                     "images in TFRecords) or no other fields (image files)");
      }
      spec.format = DataFormat::kImages;
    }
  }
  if (spec.format == DataFormat::kImages) {
    if (!spec.has_image()) {
      return f.Bad("image", "is required with format \"images\": {\"size\": [height, width]}");
    }
    if (!spec.image.feature.empty()) {
      return f.Bad("image.feature", "is for TFRecord files (set \"format\": \"tfrecord\")");
    }
  }
  if (spec.format == DataFormat::kTfRecord && spec.has_image() && spec.image.feature.empty()) {
    spec.image.feature = "image/encoded";
  }
  if (spec.format == DataFormat::kTfRecord) {
    // Features are named: a column index means nothing in an Example.
    const CsvSpec& c = spec.csv;
    if (c.has_label && c.label.by_index && !(j.contains("label") && !j["label"].is_null())) {
      return f.Bad("label", "is needed for TFRecord: the name of the label feature, or null");
    }
    if (c.has_label && c.label.by_index) return f.Bad("label", "must be a feature name");
    for (size_t i = 0; i < c.numeric.size(); ++i) {
      if (c.numeric[i].by_index) {
        return f.Bad("numeric[" + std::to_string(i) + "]", "must be a feature name");
      }
    }
    for (size_t i = 0; i < c.categorical.size(); ++i) {
      if (c.categorical[i].column.by_index) {
        return f.Bad("categorical[" + std::to_string(i) + "].column", "must be a feature name");
      }
    }
  } else if (!spec.csv.lengths.empty()) {
    return f.Bad("lengths", "is a TFRecord field (set \"format\": \"tfrecord\")");
  }
  if (!spec.query.empty() && spec.key.empty()) {
    return f.Bad("query", "needs \"key\": an integer column of the query with unique values");
  }
  if (!spec.csv.label_vocabulary.empty() && spec.csv.label_type != LabelType::kInt) {
    return f.Bad("label_vocabulary", "needs label_type \"int\"");
  }
  return spec;
}

std::string InputSpecToJson(const InputSpec& spec) {
  json j = json::object();
  auto column = [](const ColumnRef& c) -> json {
    return c.by_index ? json(c.index) : json(c.name);
  };
  if (spec.format == DataFormat::kIdx) {
    j["format"] = "idx";
    j["scale"] = spec.idx.scale;
    j["offset"] = spec.idx.offset;
    if (!spec.idx.shape.empty()) j["shape"] = spec.idx.shape;
    if (!spec.idx.labels_path.empty()) j["labels_path"] = spec.idx.labels_path;
    return j.dump();
  }
  if (spec.format == DataFormat::kAuto) return j.dump();
  if (spec.has_image()) j["image"] = ImageSpecToJson(spec.image);
  if (spec.format == DataFormat::kImages) {
    j["format"] = "images";
    return j.dump();
  }
  const CsvSpec& c = spec.csv;
  if (spec.format == DataFormat::kTfRecord) {
    j["format"] = "tfrecord";
    if (!c.lengths.empty()) j["lengths"] = c.lengths;
  } else {
    j["format"] = "csv";
    if (!spec.query.empty()) j["query"] = spec.query;
    if (!spec.key.empty()) j["key"] = spec.key;
    j["delimiter"] = std::string(1, c.delimiter);
    j["header"] = c.header;
    j["skip_rows"] = c.skip_rows;
    if (!c.column_names.empty()) j["column_names"] = c.column_names;
  }
  j["label"] = c.has_label ? column(c.label) : json(nullptr);
  j["label_type"] = c.label_type == LabelType::kInt ? "int" : "float";
  if (!c.label_vocabulary.empty()) j["label_vocabulary"] = c.label_vocabulary;
  if (!c.numeric_all) {
    j["numeric"] = json::array();
    for (const ColumnRef& n : c.numeric) j["numeric"].push_back(column(n));
  }
  if (!c.normalize.empty()) {
    j["normalize"] = json::object();
    for (const auto& [name, n] : c.normalize) {
      j["normalize"][name] = {{"mean", n.mean}, {"std", n.std}};
    }
  }
  if (c.missing_value) j["missing_value"] = *c.missing_value;
  if (!c.categorical.empty()) {
    j["categorical"] = json::array();
    for (const CategoricalColumn& cat : c.categorical) {
      json o = {{"column", column(cat.column)}};
      if (cat.hash_buckets > 0) {
        o["hash_buckets"] = cat.hash_buckets;
      } else if (cat.num_buckets > 0) {
        o["num_buckets"] = cat.num_buckets;
      } else if (!cat.boundaries.empty()) {
        o["boundaries"] = cat.boundaries;
      } else {
        o["vocabulary"] = cat.vocabulary;
      }
      j["categorical"].push_back(o);
    }
  }
  j["categorical_layout"] = c.categorical_layout == CategoricalLayout::kSeparate ? "separate"
                            : c.categorical_layout == CategoricalLayout::kConcat
                                ? "concat"
                                : "concat_with_offsets";
  return j.dump();
}

}  // namespace edl::data
