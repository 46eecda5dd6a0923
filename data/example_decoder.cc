#include "data/example_decoder.h"

#include <cmath>
#include <set>

#include "data/image_source.h"

namespace edl::data {
namespace {

using Kind = ExampleFeature::Kind;

const ExampleFeature* FindFeature(const ExampleFeatures& features, const std::string& name) {
  auto it = features.find(name);
  return it == features.end() || it->second.kind == Kind::kEmpty ? nullptr : &it->second;
}

std::string KindError(const std::string& name, const FeatureView& f, const char* want) {
  return "feature '" + name + "' is a " + ExampleKindName(f.kind) + ", expected " + want;
}

// One parser per reading thread: decoders are shared by a source's readers.
ExampleParser& ThreadParser() {
  thread_local ExampleParser parser;
  return parser;
}

}  // namespace

Result<std::unique_ptr<ExampleDecoder>> ExampleDecoder::Create(const std::string& path,
                                                               const CsvSpec& spec,
                                                               LabelPolicy labels,
                                                               const ExampleFeatures* first,
                                                               const ImageSpec* image) {
  auto bad = [&](const std::string& what) { return InvalidArgument(path + ": " + what); };
  std::unique_ptr<ExampleDecoder> d(new ExampleDecoder(spec));
  ColumnLayout& l = d->layout_;
  std::set<std::string> claimed;
  auto claim = [&](const std::string& name, const std::string& role) -> Status {
    if (!claimed.insert(name).second)
      return bad("feature '" + name + "' is used twice (" + role + ")");
    return Status::Ok();
  };
  if (spec.has_label) {
    if (spec.label.by_index) {
      return bad(
          "input.label must name the label feature (or be null): TFRecord features have names");
    }
    const bool present = first == nullptr || FindFeature(*first, spec.label.name) != nullptr;
    if (present || labels == LabelPolicy::kRequired) {
      if (!present) {
        return NotFound(path + ": the label feature '" + spec.label.name +
                        "' is not in the first record");
      }
      d->label_ = spec.label.name;
      EDL_RETURN_IF_ERROR(claim(d->label_, "the label"));
      l.has_labels = true;
      l.float_labels = spec.label_type == LabelType::kFloat;
      for (size_t i = 0; i < spec.label_vocabulary.size(); ++i) {
        d->label_vocabulary_[spec.label_vocabulary[i]] = static_cast<int64_t>(i);
      }
    }
  }
  if (image != nullptr) {
    d->has_image_ = true;
    d->image_ = *image;
    EDL_RETURN_IF_ERROR(claim(image->feature, "the image"));
    if (first != nullptr && FindFeature(*first, image->feature) == nullptr) {
      return NotFound(path + ": the image feature '" + image->feature +
                      "' is not in the first record (set input.image.feature)");
    }
    if (!spec.numeric_all || !spec.normalize.empty() || !spec.lengths.empty()) {
      return bad(
          "input.numeric, normalize and lengths do not go with input.image: the image is "
          "the numeric input");
    }
  }
  const IdsPlan ids = PlanIds(spec.categorical, spec.categorical_layout);
  l.concat_ids = ids.concat;
  d->offsets_ = ids.offsets;
  for (const CategoricalColumn& c : spec.categorical) {
    if (c.column.by_index) return bad("input.categorical columns must be feature names");
    EDL_RETURN_IF_ERROR(claim(c.column.name, "a categorical"));
    d->categorical_.push_back(c.column.name);
    d->encoders_.emplace_back(c);
    if (!l.concat_ids) l.inputs.push_back({c.column.name, tensor::DType::kInt64, {}, c.NumIds()});
  }
  std::vector<std::string> numeric;
  if (spec.numeric_all && image == nullptr) {
    if (first != nullptr) {
      for (const auto& [name, f] : *first) {
        if (claimed.count(name) || f.kind == Kind::kEmpty) continue;
        if (f.kind == Kind::kBytes) {
          return bad("feature '" + name +
                     "' is a bytes_list: name it in input.categorical, or list the numeric "
                     "features in input.numeric");
        }
        numeric.push_back(name);
      }
    }
  } else {
    for (const ColumnRef& c : spec.numeric) {
      if (c.by_index) return bad("input.numeric entries must be feature names");
      numeric.push_back(c.name);
    }
  }
  for (const std::string& name : numeric) {
    EDL_RETURN_IF_ERROR(claim(name, "a numeric"));
    Numeric n{name, 1, {}};
    auto len = spec.lengths.find(name);
    const ExampleFeature* f = first ? FindFeature(*first, name) : nullptr;
    if (len != spec.lengths.end()) {
      n.length = len->second;
    } else if (f != nullptr) {
      n.length = static_cast<int64_t>(f->size());
    }
    auto norm = spec.normalize.find(name);
    if (norm != spec.normalize.end()) n.norm = norm->second;
    l.num_numeric += n.length;
    d->numeric_.push_back(std::move(n));
  }
  for (const auto& [name, norm] : spec.normalize) {
    bool used = false;
    for (const Numeric& n : d->numeric_) used |= n.name == name;
    if (!used) return bad("input.normalize names '" + name + "', which is not a numeric feature");
  }
  for (const auto& [name, len] : spec.lengths) {
    bool used = false;
    for (const Numeric& n : d->numeric_) used |= n.name == name;
    if (!used) return bad("input.lengths names '" + name + "', which is not a numeric feature");
  }
  l.num_categorical = static_cast<int64_t>(d->categorical_.size());
  if (image != nullptr) {
    l.num_numeric = image->height * image->width * image->channels;
    l.inputs.insert(
        l.inputs.begin(),
        {"image", tensor::DType::kFloat32, {image->height, image->width, image->channels}, 0});
  } else if (l.num_numeric > 0) {
    l.inputs.insert(l.inputs.begin(), {"numeric", tensor::DType::kFloat32, {l.num_numeric}, 0});
  }
  if (l.concat_ids && l.num_categorical > 0) {
    l.inputs.push_back({"categorical", tensor::DType::kInt64, {l.num_categorical}, ids.num_ids});
  }
  if (l.inputs.empty()) return bad("no input features (only a label)");
  return d;
}

template <typename Find>
Status ExampleDecoder::DecodeInto(const Find& find, ColumnBuffer* out) const {
  if (has_image_) {
    const FeatureView f = find(image_.feature);
    if (f.kind == Kind::kEmpty) {
      return InvalidArgument("the image feature '" + image_.feature + "' is missing");
    }
    if (f.kind != Kind::kBytes || f.size != 1) {
      return InvalidArgument("the image feature '" + image_.feature +
                             "' must be a bytes_list of one encoded image, got " +
                             std::to_string(f.size) + " " + ExampleKindName(f.kind) + " values");
    }
    const size_t at = out->numeric.size();
    out->numeric.resize(at + static_cast<size_t>(layout_.num_numeric));
    EDL_RETURN_IF_ERROR(DecodeToInput(f.bytes(0), image_, out->numeric.data() + at)
                            .WithPrefix("the image feature '" + image_.feature + "'"));
  }
  for (const Numeric& n : numeric_) {
    const FeatureView f = find(n.name);
    if (f.kind == Kind::kEmpty) {
      if (!spec_.missing_value) {
        return InvalidArgument("feature '" + n.name +
                               "' is missing (set input.missing_value to fill absent features)");
      }
      const float v = static_cast<float>((*spec_.missing_value - n.norm.mean) / n.norm.std);
      out->numeric.insert(out->numeric.end(), n.length, v);
      continue;
    }
    if (f.kind == Kind::kBytes)
      return InvalidArgument(KindError(n.name, f, "float_list or int64_list"));
    if (static_cast<int64_t>(f.size) != n.length) {
      return InvalidArgument("feature '" + n.name + "' has " + std::to_string(f.size) +
                             " values, expected " + std::to_string(n.length));
    }
    for (size_t i = 0; i < f.size; ++i) {
      const double x = f.kind == Kind::kFloat ? f.floats[i] : static_cast<double>(f.ints[i]);
      if (!std::isfinite(x)) {
        return InvalidArgument("feature '" + n.name + "' value " + std::to_string(i) +
                               " is not finite");
      }
      out->numeric.push_back(static_cast<float>((x - n.norm.mean) / n.norm.std));
    }
  }
  for (size_t k = 0; k < categorical_.size(); ++k) {
    const FeatureView f = find(categorical_[k]);
    int64_t id;
    if (f.kind == Kind::kEmpty) {
      id = encoders_[k].Id("");
    } else if (f.size != 1) {
      return InvalidArgument("feature '" + categorical_[k] + "' has " + std::to_string(f.size) +
                             " values; a categorical feature has one");
    } else if (f.kind == Kind::kBytes) {
      id = encoders_[k].Id(f.bytes(0));
    } else if (f.kind == Kind::kInt64) {
      id = encoders_[k].Id(std::to_string(f.ints[0]));
    } else {
      return InvalidArgument(KindError(categorical_[k], f, "int64_list or bytes_list"));
    }
    if (id < 0) {
      const std::string value = f.kind == Kind::kBytes   ? std::string(f.bytes(0))
                                : f.kind == Kind::kInt64 ? std::to_string(f.ints[0])
                                                         : std::string();
      return InvalidArgument("feature '" + categorical_[k] +
                             "': " + encoders_[k].RefusalMessage(value));
    }
    out->ids.push_back(id + offsets_[k]);
  }
  return layout_.has_labels ? DecodeLabel(find, out) : Status::Ok();
}

template <typename Find>
Status ExampleDecoder::DecodeLabel(const Find& find, ColumnBuffer* out) const {
  const FeatureView f = find(label_);
  if (f.kind == Kind::kEmpty)
    return InvalidArgument("the label feature '" + label_ + "' is missing");
  if (f.size != 1) {
    return InvalidArgument("the label feature '" + label_ + "' has " + std::to_string(f.size) +
                           " values, expected 1");
  }
  if (layout_.float_labels) {
    if (f.kind == Kind::kBytes)
      return InvalidArgument(KindError(label_, f, "float_list or int64_list"));
    out->float_labels.push_back(f.kind == Kind::kFloat ? f.floats[0]
                                                       : static_cast<float>(f.ints[0]));
    return Status::Ok();
  }
  if (!label_vocabulary_.empty()) {
    if (f.kind != Kind::kBytes)
      return InvalidArgument(KindError(label_, f, "bytes_list (label_vocabulary is set)"));
    auto it = label_vocabulary_.find(std::string(f.bytes(0)));
    if (it == label_vocabulary_.end()) {
      return InvalidArgument("label '" + std::string(f.bytes(0)) +
                             "' is not in input.label_vocabulary");
    }
    out->int_labels.push_back(it->second);
    return Status::Ok();
  }
  if (f.kind != Kind::kInt64) {
    return InvalidArgument(KindError(label_, f,
                                     "int64_list (classes; use label_type \"float\" "
                                     "for regression, label_vocabulary for names)"));
  }
  out->int_labels.push_back(f.ints[0]);
  return Status::Ok();
}

Status ExampleDecoder::Decode(std::string_view payload, ColumnBuffer* out) const {
  ExampleParser& parser = ThreadParser();
  EDL_RETURN_IF_ERROR(parser.Parse(payload, "the record"));
  auto find = [&](const std::string& name) { return parser.Find(name, ExampleParser::Hash(name)); };
  return out->Append([&](ColumnBuffer* b) { return DecodeInto(find, b); });
}

Status ExampleDecoder::Decode(const ExampleFeatures& features, ColumnBuffer* out) const {
  auto find = [&](const std::string& name) {
    auto it = features.find(name);
    return it == features.end() ? FeatureView() : ViewOf(it->second);
  };
  return out->Append([&](ColumnBuffer* b) { return DecodeInto(find, b); });
}

}  // namespace edl::data
