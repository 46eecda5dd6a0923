#include "tensor/tensor.h"

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "base/block_cache.h"
#include "tensor/device_runtime.h"

namespace edl::tensor {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
    case DType::kBFloat16: return 2;
    case DType::kFloat16: return 2;
  }
  EDL_CHECK(false) << "unknown dtype";
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat16: return "float16";
  }
  return "?";
}

const char* DeviceName(Device device) { return device == Device::kCPU ? "cpu" : "cuda"; }

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    EDL_CHECK_GE(d, 0) << ShapeString(shape);
    n *= d;
  }
  return n;
}

std::string ShapeString(const Shape& shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  if (device == Device::kCPU) {
    data_ = BlockCache::Allocate(bytes);
    return;
  }
  DeviceRuntime* runtime = RuntimeFor(device);
  EDL_CHECK(runtime != nullptr) << DeviceName(device)
                                << " storage before LoadCudaRuntime() succeeded";
  data_ = runtime->Allocate(bytes);
}

Storage::Storage(void* data, size_t bytes, std::shared_ptr<void> owner)
    : data_(data), bytes_(bytes), device_(Device::kCPU), owner_(std::move(owner)) {
  EDL_CHECK(owner_ != nullptr) << "adopted storage without an owner";
}

Storage::~Storage() {
  if (owner_) return;  // the owner frees the bytes
  if (device_ == Device::kCPU) {
    BlockCache::Release(data_, bytes_);
  } else {
    RuntimeFor(device_)->Free(data_, bytes_);
  }
}

Tensor Tensor::Adopt(std::shared_ptr<void> owner, void* data, Shape shape, DType dtype) {
  Tensor t;
  t.numel_ = NumElements(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(data, t.bytes(), std::move(owner));
  return t;
}

Tensor Tensor::Empty(Shape shape, DType dtype, Device device) {
  Tensor t;
  t.numel_ = NumElements(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(t.bytes(), device);
  return t;
}

Tensor Tensor::Zeros(Shape shape, DType dtype) {
  Tensor t = Empty(std::move(shape), dtype);
  std::memset(t.raw_data(), 0, t.bytes());
  return t;
}

Tensor Tensor::Full(Shape shape, float value) {
  Tensor t = Empty(std::move(shape));
  t.Fill(value);
  return t;
}

Tensor Tensor::FromVector(Shape shape, const std::vector<float>& values) {
  Tensor t = Empty(std::move(shape));
  EDL_CHECK_EQ(static_cast<int64_t>(values.size()), t.numel());
  std::memcpy(t.raw_data(), values.data(), t.bytes());
  return t;
}

Tensor Tensor::FromInts(Shape shape, const std::vector<int64_t>& values) {
  Tensor t = Empty(std::move(shape), DType::kInt64);
  EDL_CHECK_EQ(static_cast<int64_t>(values.size()), t.numel());
  std::memcpy(t.raw_data(), values.data(), t.bytes());
  return t;
}

Tensor Tensor::Zeros(Shape shape, DType dtype, Device device) {
  return Zeros(std::move(shape), dtype).On(device);
}

Tensor Tensor::Full(Shape shape, float value, Device device) {
  if (device == Device::kCPU) return Full(std::move(shape), value);
  Tensor t = Empty(std::move(shape), DType::kFloat32, device);
  t.Fill(value);
  return t;
}

Tensor Tensor::FromVector(Shape shape, const std::vector<float>& values, Device device) {
  return FromVector(std::move(shape), values).On(device);
}

Tensor Tensor::FromInts(Shape shape, const std::vector<int64_t>& values, Device device) {
  return FromInts(std::move(shape), values).On(device);
}

int64_t Tensor::dim(int axis) const {
  int r = rank();
  if (axis < 0) axis += r;
  EDL_CHECK(axis >= 0 && axis < r) << "axis " << axis << " of " << ShapeString(shape_);
  return shape_[axis];
}

void* Tensor::raw_data() {
  EDL_CHECK(defined()) << "undefined tensor";
  return static_cast<char*>(storage_->data()) + offset_;
}

const void* Tensor::raw_data() const {
  EDL_CHECK(defined()) << "undefined tensor";
  return static_cast<const char*>(storage_->data()) + offset_;
}

Tensor Tensor::Reshape(Shape shape) const {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EDL_CHECK_EQ(infer, -1) << "two -1 dims in " << ShapeString(shape);
      infer = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    EDL_CHECK(known > 0 && numel_ % known == 0)
        << ShapeString(shape_) << " -> " << ShapeString(shape);
    shape[infer] = numel_ / known;
  }
  EDL_CHECK_EQ(NumElements(shape), numel_) << ShapeString(shape_) << " -> " << ShapeString(shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  EDL_CHECK_GE(rank(), 1);
  EDL_CHECK(0 <= begin && begin <= end && end <= shape_[0])
      << "slice [" << begin << ", " << end << ") of " << ShapeString(shape_);
  int64_t row = shape_[0] == 0 ? 0 : numel_ / shape_[0];
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.numel_ = row * (end - begin);
  t.offset_ = offset_ + static_cast<size_t>(begin * row) * DTypeSize(dtype_);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t = Empty(shape_, dtype_, device());
  t.CopyFrom(*this);
  return t;
}

Tensor Tensor::To(Device device) const {
  Tensor t = Empty(shape_, dtype_, device);
  t.CopyFrom(*this);
  return t;
}

void Tensor::CopyFrom(const Tensor& src) {
  EDL_CHECK_EQ(src.numel(), numel_);
  EDL_CHECK(src.dtype() == dtype_);
  if (numel_ == 0) return;
  const Device to = device(), from = src.device();
  if (to == Device::kCPU && from == Device::kCPU) {
    std::memmove(raw_data(), src.raw_data(), bytes());
  } else if (to == Device::kCPU) {
    RuntimeFor(from)->CopyToHost(raw_data(), src.raw_data(), bytes());
  } else if (from == Device::kCPU) {
    RuntimeFor(to)->CopyToDevice(raw_data(), src.raw_data(), bytes());
  } else {
    EDL_CHECK(to == from) << "copy between two accelerators";
    RuntimeFor(to)->CopyOnDevice(raw_data(), src.raw_data(), bytes());
  }
}

void Tensor::Fill(float value) {
  if (device() != Device::kCPU) {
    Tensor host = Empty(shape_, dtype_);
    host.Fill(value);
    CopyFrom(host);
    return;
  }
  if (dtype_ == DType::kFloat32) {
    float* p = f32();
    for (int64_t i = 0; i < numel_; ++i) p[i] = value;
  } else if (dtype_ == DType::kInt64) {
    int64_t* p = i64();
    for (int64_t i = 0; i < numel_; ++i) p[i] = static_cast<int64_t>(value);
  } else {
    EDL_CHECK(false) << "Fill on " << DTypeName(dtype_);
  }
}

std::vector<float> Tensor::ToVector() const {
  if (device() != Device::kCPU) return To(Device::kCPU).ToVector();
  std::vector<float> v(numel_);
  if (dtype_ == DType::kFloat32) {
    if (numel_) std::memcpy(v.data(), f32(), bytes());
  } else if (dtype_ == DType::kInt64) {
    const int64_t* p = i64();
    for (int64_t i = 0; i < numel_; ++i) v[i] = static_cast<float>(p[i]);
  } else {
    EDL_CHECK(false) << "ToVector on " << DTypeName(dtype_);
  }
  return v;
}

float Tensor::item() const {
  EDL_CHECK_EQ(numel_, 1) << ShapeString(shape_);
  if (device() != Device::kCPU) return To(Device::kCPU).item();
  return f32()[0];
}

}  // namespace edl::tensor
