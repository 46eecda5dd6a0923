// ExampleDecoder: turns tf.train.Examples into model inputs as the spec
// says (data/input_spec.h), with features in place of CSV columns:
//  * numeric features (float_list or int64_list) of a fixed length L add L
//    float32 values each, normalized as CSV columns are; L comes from the
//    spec's "lengths", else from the data set's first record; an absent
//    feature is filled with missing_value when set, else an error;
//  * categorical features (int64_list or bytes_list, one value) become ids
//    by hashing or vocabulary exactly as a CSV field with the same text
//    (an int64 as its decimal digits); an absent one is the empty value;
//  * the label: int64_list (classes), bytes_list through label_vocabulary,
//    or float_list/int64_list with label_type "float";
//  * with an image spec, the bytes_list feature image.feature (one JPEG or
//    PNG, as TensorFlow's ImageNet/TF-Slim records hold in "image/encoded")
//    is decoded and resized into the float32 input "image" [height, width,
//    channels] (data/image_source.h's DecodeToInput), in place of numeric
//    features.
// Without "numeric", every feature of the first record that is not the
// label or categorical is numeric, in name order (none with an image).
// Immutable after Create.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "data/categorical.h"
#include "data/column_buffer.h"
#include "data/input_spec.h"
#include "data/source.h"
#include "data/tf_example.h"

namespace edl::data {

using ExampleFeatures = std::map<std::string, ExampleFeature>;

class ExampleDecoder {
 public:
  // `first`: the features of the data set's first record (nullptr when it
  // has none). Errors name `path` and the feature.
  static Result<std::unique_ptr<ExampleDecoder>> Create(const std::string& path,
                                                        const CsvSpec& spec, LabelPolicy labels,
                                                        const ExampleFeatures* first,
                                                        const ImageSpec* image = nullptr);

  const ColumnLayout& layout() const { return layout_; }

  // Appends one record to `out`, or leaves it unchanged and says what is
  // wrong ("feature 'age' has 3 values, expected 1"); callers prefix where.
  Status Decode(std::string_view payload, ColumnBuffer* out) const;
  Status Decode(const ExampleFeatures& features, ColumnBuffer* out) const;

 private:
  struct Numeric {
    std::string name;
    int64_t length = 1;
    Normalization norm;
  };
  explicit ExampleDecoder(const CsvSpec& spec) : spec_(spec) {}
  // `find(name)` gives a FeatureView (kind kEmpty when absent).
  template <typename Find>
  Status DecodeInto(const Find& find, ColumnBuffer* out) const;
  template <typename Find>
  Status DecodeLabel(const Find& find, ColumnBuffer* out) const;

  CsvSpec spec_;
  bool has_image_ = false;
  ImageSpec image_;
  ColumnLayout layout_;
  std::vector<Numeric> numeric_;
  std::vector<std::string> categorical_;
  std::vector<CategoricalEncoder> encoders_;
  std::vector<int64_t> offsets_;
  std::string label_;
  std::unordered_map<std::string, int64_t> label_vocabulary_;
};

}  // namespace edl::data
