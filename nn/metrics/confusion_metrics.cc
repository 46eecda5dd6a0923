#include "nn/metrics/confusion_metrics.h"

#include <algorithm>
#include <cmath>

namespace edl::nn::metrics {

namespace {

double DivNoNan(double a, double b) { return b == 0 ? 0.0 : a / b; }

// Calls fn(positive_label, predicted_positive) for every element.
template <typename Fn>
void ForEachDecision(const Tensor& y_true, const Tensor& y_pred, double threshold, Fn fn) {
  EDL_CHECK_EQ(y_true.numel(), y_pred.numel())
      << "y_true " << tensor::ShapeString(y_true.shape()) << " vs y_pred "
      << tensor::ShapeString(y_pred.shape());
  const std::vector<float> t = y_true.ToVector();
  const float* p = y_pred.f32();
  const float th = static_cast<float>(threshold);
  for (size_t i = 0; i < t.size(); ++i) fn(t[i] != 0.f, p[i] > th);
}

}  // namespace

void Precision::Update(const Tensor& y_true, const Tensor& y_pred) {
  ForEachDecision(y_true, y_pred, threshold_, [&](bool label, bool predicted) {
    if (predicted) (label ? tp_ : fp_) += 1;
  });
}

double Precision::Result() const { return DivNoNan(tp_, tp_ + fp_); }

Status Precision::Merge(const std::vector<double>& other) {
  if (other.size() != 2) return StateSizeError(2, other.size());
  tp_ += other[0];
  fp_ += other[1];
  return Status::Ok();
}

void Recall::Update(const Tensor& y_true, const Tensor& y_pred) {
  ForEachDecision(y_true, y_pred, threshold_, [&](bool label, bool predicted) {
    if (label) (predicted ? tp_ : fn_) += 1;
  });
}

double Recall::Result() const { return DivNoNan(tp_, tp_ + fn_); }

Status Recall::Merge(const std::vector<double>& other) {
  if (other.size() != 2) return StateSizeError(2, other.size());
  tp_ += other[0];
  fn_ += other[1];
  return Status::Ok();
}

Auc::Auc(std::string name, int num_thresholds, bool from_logits)
    : Metric(std::move(name)), from_logits_(from_logits) {
  EDL_CHECK_GT(num_thresholds, 1);
  constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()
  thresholds_.push_back(static_cast<float>(0.0 - kEpsilon));
  for (int i = 0; i < num_thresholds - 2; ++i) {
    thresholds_.push_back(static_cast<float>((i + 1) * 1.0 / (num_thresholds - 1)));
  }
  thresholds_.push_back(static_cast<float>(1.0 + kEpsilon));
  Reset();
}

void Auc::Reset() {
  const size_t n = thresholds_.size();
  tp_.assign(n, 0);
  fp_.assign(n, 0);
  tn_.assign(n, 0);
  fn_.assign(n, 0);
}

void Auc::Update(const Tensor& y_true, const Tensor& y_pred) {
  EDL_CHECK_EQ(y_true.numel(), y_pred.numel())
      << "y_true " << tensor::ShapeString(y_true.shape()) << " vs y_pred "
      << tensor::ShapeString(y_pred.shape());
  const size_t n = thresholds_.size();
  // above[k]: labels whose prediction exceeds exactly the k lowest
  // thresholds; a prediction exceeds threshold i when k > i.
  std::vector<double> pos_above(n + 1, 0), neg_above(n + 1, 0);
  const std::vector<float> t = y_true.ToVector();
  const float* p = y_pred.f32();
  for (size_t i = 0; i < t.size(); ++i) {
    float pred = p[i];
    if (from_logits_) pred = 1.f / (1.f + std::exp(-pred));
    const size_t k = static_cast<size_t>(
        std::lower_bound(thresholds_.begin(), thresholds_.end(), pred) - thresholds_.begin());
    (t[i] != 0.f ? pos_above : neg_above)[k] += 1;
  }
  double positives = 0, negatives = 0;
  for (size_t k = 0; k <= n; ++k) {
    positives += pos_above[k];
    negatives += neg_above[k];
  }
  // Walk thresholds from the top: tp[i] counts positives with k > i.
  double tp = 0, fp = 0;
  for (size_t i = n; i-- > 0;) {
    tp += pos_above[i + 1];
    fp += neg_above[i + 1];
    tp_[i] += tp;
    fp_[i] += fp;
    fn_[i] += positives - tp;
    tn_[i] += negatives - fp;
  }
}

double Auc::Result() const {
  const size_t n = thresholds_.size();
  double area = 0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double tpr0 = DivNoNan(tp_[i], tp_[i] + fn_[i]);
    const double tpr1 = DivNoNan(tp_[i + 1], tp_[i + 1] + fn_[i + 1]);
    const double fpr0 = DivNoNan(fp_[i], fp_[i] + tn_[i]);
    const double fpr1 = DivNoNan(fp_[i + 1], fp_[i + 1] + tn_[i + 1]);
    area += (fpr0 - fpr1) * (tpr0 + tpr1) / 2;
  }
  return area;
}

std::vector<double> Auc::State() const {
  std::vector<double> state;
  state.reserve(4 * tp_.size());
  for (const auto* v : {&tp_, &fp_, &tn_, &fn_}) {
    state.insert(state.end(), v->begin(), v->end());
  }
  return state;
}

Status Auc::Merge(const std::vector<double>& other) {
  const size_t n = thresholds_.size();
  if (other.size() != 4 * n) return StateSizeError(4 * n, other.size());
  size_t offset = 0;
  for (auto* v : {&tp_, &fp_, &tn_, &fn_}) {
    for (size_t i = 0; i < n; ++i) (*v)[i] += other[offset + i];
    offset += n;
  }
  return Status::Ok();
}

}  // namespace edl::nn::metrics
