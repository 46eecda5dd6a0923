// Small checks shared by the ops.h implementation files (ops*.cc).
#pragma once

#include "tensor/tensor.h"

namespace edl::tensor::internal {

// REQUIRES-style checks that name the op in their message.
inline void CheckFloat(const Tensor& t, const char* op, const char* arg) {
  EDL_CHECK(t.defined()) << op << ": " << arg << " is undefined";
  EDL_CHECK(t.dtype() == DType::kFloat32)
      << op << ": " << arg << " must be float32, got " << DTypeName(t.dtype());
}

inline void CheckSameShape(const Tensor& a, const Tensor& b, const char* op) {
  EDL_CHECK(a.shape() == b.shape())
      << op << ": shapes differ: " << ShapeString(a.shape()) << " vs " << ShapeString(b.shape());
}

inline void CheckSameDevice(const Tensor& a, const Tensor& b, const char* op) {
  EDL_CHECK(a.device() == b.device())
      << op << ": tensors on " << DeviceName(a.device()) << " and " << DeviceName(b.device());
}

// Maps a possibly negative axis into [0, rank).
inline int NormalizeAxis(int axis, int rank, const char* op) {
  int a = axis < 0 ? axis + rank : axis;
  EDL_CHECK(a >= 0 && a < rank) << op << ": axis " << axis << " out of range for rank " << rank;
  return a;
}

}  // namespace edl::tensor::internal
