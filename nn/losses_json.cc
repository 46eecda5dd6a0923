// Reading a Keras-serialized loss (nn/losses.h).
#include <cmath>

#include "nn/keras_object.h"
#include "nn/losses.h"

namespace edl::nn {
namespace {

struct KnownLoss {
  const char* canonical;  // internal::CanonicalName form
  const char* name;       // LossOptions::name
  bool crossentropy;
  bool smoothing;
  bool delta;
};

constexpr KnownLoss kKnownLosses[] = {
    {"sparsecategoricalcrossentropy", "sparse_categorical_crossentropy", true, false, false},
    {"categoricalcrossentropy", "categorical_crossentropy", true, true, false},
    {"binarycrossentropy", "binary_crossentropy", true, true, false},
    {"meansquarederror", "mean_squared_error", false, false, false},
    {"mse", "mean_squared_error", false, false, false},
    {"meanabsoluteerror", "mean_absolute_error", false, false, false},
    {"mae", "mean_absolute_error", false, false, false},
    {"huber", "huber", false, false, true},
    {"huberloss", "huber", false, false, true},
};

}  // namespace

Result<LossOptions> LossOptionsFromJson(const std::string& json_text, const std::string& where) {
  EDL_ASSIGN_OR_RETURN(internal::KerasObject o, internal::KerasObject::Parse(json_text, where));
  const KnownLoss* known = nullptr;
  for (const KnownLoss& k : kKnownLosses) {
    if (o.canonical() == k.canonical) known = &k;
  }
  if (known == nullptr) {
    return InvalidArgument(where + ": unknown loss \"" + o.class_name() +
                           "\" (known: sparse_categorical_crossentropy, "
                           "categorical_crossentropy, binary_crossentropy, "
                           "mean_squared_error, mean_absolute_error, huber)");
  }
  LossOptions options;
  options.name = known->name;
  o.Ignore({"name", "dtype"});
  if (known->crossentropy) EDL_RETURN_IF_ERROR(o.Get("from_logits", &options.from_logits));
  if (known->smoothing) {
    EDL_RETURN_IF_ERROR(o.Get("label_smoothing", &options.label_smoothing));
    if (options.label_smoothing < 0 || options.label_smoothing > 1) {
      return o.FieldError("label_smoothing", "must be in [0, 1]");
    }
  }
  if (known->delta) {
    EDL_RETURN_IF_ERROR(o.Get("delta", &options.delta));
    if (!(options.delta > 0)) return o.FieldError("delta", "must be positive");
  }
  if (known->crossentropy) {
    double axis = -1;
    EDL_RETURN_IF_ERROR(o.Get("axis", &axis));
    if (axis != -1) return o.FieldError("axis", "only -1 (the last axis) is supported");
  }
  std::string reduction = "auto";
  EDL_RETURN_IF_ERROR(o.Get("reduction", &reduction));
  if (reduction != "auto" && reduction != "sum_over_batch_size") {
    return o.FieldError("reduction",
                        "only \"auto\" / \"sum_over_batch_size\" is "
                        "supported, got \"" +
                            reduction + "\"");
  }
  std::string ignore_class;
  EDL_RETURN_IF_ERROR(o.Get("ignore_class", &ignore_class));  // null only
  if (!ignore_class.empty()) return o.FieldError("ignore_class", "is not supported");
  EDL_RETURN_IF_ERROR(o.CheckAllFieldsUsed());
  return options;
}

Result<std::unique_ptr<Loss>> LossFromJson(const std::string& json_text, const std::string& where) {
  EDL_ASSIGN_OR_RETURN(LossOptions options, LossOptionsFromJson(json_text, where));
  Result<std::unique_ptr<Loss>> loss = MakeLoss(options);
  if (!loss.ok()) return loss.status().WithPrefix(where);
  return loss;
}

}  // namespace edl::nn
