// InputSpec: how records of a data source become model inputs, parsed from
// the "input" object of a model spec (docs/data.md has the JSON format).
//
// IDX images become one float32 input x * scale + offset of a per-record
// shape; CSV rows become a float32 input of the numeric columns (each
// (x - mean) / std) followed by int64 id inputs for the categorical columns,
// either one [N] input per column ("separate") or one [N, k] input whose
// column j ids are offset by the id counts of columns before it
// ("concat_with_offsets", for one shared embedding table) or are kept as
// they are ("concat"). A default-
// constructed spec is what an absent "input" means. Plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::data {

// kImages: image files, in one folder per class or listed by a CSV file
// (data/image_list.h).
enum class DataFormat { kAuto, kIdx, kCsv, kTfRecord, kImages };
enum class LabelType { kInt, kFloat };
// kSeparate: one [N] ids input per column. kConcatWithOffsets: one [N, k]
// input, column j's ids offset by the id counts of the columns before it
// (one shared embedding table). kConcat: one [N, k] input, ids as they are.
enum class CategoricalLayout { kSeparate, kConcatWithOffsets, kConcat };

// A CSV column named by header name, or by 0-based index where a negative
// index counts from the end (-1 is the last column). Files without a header
// (and without column_names) name their columns "0", "1", ...
struct ColumnRef {
  std::string name;
  int64_t index = 0;
  bool by_index = false;

  static ColumnRef Named(std::string n) { return {std::move(n), 0, false}; }
  static ColumnRef Index(int64_t i) { return {"", i, true}; }
  // "'age'" or "#-1", for messages.
  std::string ToString() const;
};

struct Normalization {
  double mean = 0.0;
  double std = 1.0;  // > 0
};

// Ids: with hash_buckets > 0, FNV-1a-64(value) % hash_buckets, in
// [0, hash_buckets). With num_buckets > 0 (an identity column, as
// TensorFlow's categorical_column_with_identity), the value is the id
// itself: an integer in [0, num_buckets), anything else an error.
// Otherwise vocabulary[i] has id i + 1 and every other value (out of
// vocabulary) id 0, so ids are in [0, vocabulary.size() + 1). Exactly one
// of the three is set. With boundaries (strictly increasing; a bucketized
// numeric column, as tf.feature_column.bucketized_column) the value is a
// number and its id the count of boundaries <= it, in
// [0, boundaries.size() + 1); anything else is an error.
struct CategoricalColumn {
  ColumnRef column;
  int64_t hash_buckets = 0;
  int64_t num_buckets = 0;
  std::vector<std::string> vocabulary;
  std::vector<double> boundaries;

  // The number of distinct ids (the embedding table's input_dim).
  int64_t NumIds() const {
    if (hash_buckets > 0) return hash_buckets;
    if (num_buckets > 0) return num_buckets;
    if (!boundaries.empty()) return static_cast<int64_t>(boundaries.size()) + 1;
    return static_cast<int64_t>(vocabulary.size()) + 1;
  }
};

struct IdxSpec {
  double scale = 1.0 / 255.0;
  double offset = 0.0;
  std::vector<int64_t> shape;  // per record; empty: the file's dims[1:]
  std::string labels_path;     // empty: derived from the images file name
};

struct CsvSpec {
  char delimiter = ',';
  bool header = true;                     // the first (unskipped) row names columns
  int64_t skip_rows = 0;                  // records dropped before the header/data
  std::vector<std::string> column_names;  // overrides/supplies the header
  bool has_label = true;                  // false: "label": null
  ColumnRef label = ColumnRef::Index(-1);
  LabelType label_type = LabelType::kInt;
  std::vector<std::string> label_vocabulary;  // string labels -> their index
  bool numeric_all = true;                    // "numeric" absent: all non-label, non-categorical
  std::vector<ColumnRef> numeric;
  std::map<std::string, Normalization> normalize;  // by column name
  std::optional<double> missing_value;             // empty numeric fields; else an error
  std::vector<CategoricalColumn> categorical;
  CategoricalLayout categorical_layout = CategoricalLayout::kSeparate;
  // TFRecord: values per numeric feature (absent: its length in the data
  // set's first record).
  std::map<std::string, int64_t> lengths;
};

// How Keras' Resizing layer samples (tf.image.resize without antialiasing,
// half-pixel centers): bilinear, nearest, or area (the mean of the source
// pixels each output pixel covers, weighted by overlap).
enum class Interpolation { kBilinear, kNearest, kArea };

// JPEG/PNG images decoded, converted to `channels` and resized to
// height x width (data/image_decoder.h, data/image_resize.h): one float32
// input [height, width, channels] of pixel * scale + offset. From image
// files (format "images") or, with `feature`, from the bytes feature of
// TFRecord Examples (labels then from the spec's "label" feature).
struct ImageSpec {
  int64_t height = 0;  // > 0 when the spec has an "image" object
  int64_t width = 0;
  int64_t channels = 3;  // 1 (grayscale) or 3 (RGB)
  Interpolation interpolation = Interpolation::kBilinear;
  // Crop the largest centred window of the target's aspect ratio before
  // resizing (Keras' crop_to_aspect_ratio) instead of stretching.
  bool crop_to_aspect_ratio = false;
  // Decode a JPEG at 1/2, 1/4 or 1/8 size (libjpeg-turbo's DCT scaling)
  // when that still covers the target: much faster for large photos; the
  // pixels then differ from a full decode's.
  bool dct_scaling = true;
  double scale = 1.0 / 255.0;
  double offset = 0.0;
  // Class id i is class_names[i]. Empty: the class folders' (or the
  // listing's labels') names in sorted order, filled in when training
  // starts and kept in checkpoints and exports.
  std::vector<std::string> class_names;
  // Larger images are refused before their pixels are allocated (a
  // decompression bomb); PIL's limit.
  int64_t max_pixels = 89478485;
  std::string feature;  // TFRecord: the bytes feature ("image/encoded")
};

// TFRecord files of tf.train.Example use the CSV fields with features in
// place of columns (by name only): label, label_type, label_vocabulary,
// numeric, normalize, missing_value, categorical, categorical_layout, and
// lengths; a numeric feature of length L adds L values to "numeric".
struct InputSpec {
  DataFormat format = DataFormat::kAuto;  // kAuto: from the file name/bytes
  // A database data flag naming no table or query reads this SELECT, by
  // this key column (data/sql_url.h): "query" and "key" in the JSON.
  std::string query;
  std::string key;
  IdxSpec idx;
  CsvSpec csv;  // CSV and TFRecord
  ImageSpec image;

  bool has_image() const { return image.height > 0; }
};

// Parses the "input" JSON object. Errors are InvalidArgument naming `where`
// (e.g. "model.json: input") and the field: unknown fields, wrong types,
// fields of the other format, bad values.
Result<InputSpec> InputSpecFromJson(const std::string& json_text, const std::string& where);

// The JSON object InputSpecFromJson parses back to an equal spec.
std::string InputSpecToJson(const InputSpec& spec);

}  // namespace edl::data
