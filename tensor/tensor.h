// Tensor: an n-dimensional array with a shape, a dtype and a device, over
// reference-counted storage. Tensors are always dense and row-major
// (contiguous); Reshape and Slice (along the first axis) return views that
// share storage with the original, so writes through one are seen by the
// other. Copying a Tensor copies the handle, not the data (use Clone()).
//
// Thread-safety: handles may be copied between threads; concurrent writes to
// the same elements are the caller's to avoid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"

namespace edl::tensor {

// kBFloat16 and kFloat16 are storage formats (the wire's gradient
// compression, roles/ps/compression.h); tensor ops compute in float32.
enum class DType : uint8_t { kFloat32 = 0, kInt64 = 1, kUInt8 = 2, kBFloat16 = 3, kFloat16 = 4 };
size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);

enum class Device : uint8_t { kCPU = 0, kCUDA = 1 };
const char* DeviceName(Device device);

using Shape = std::vector<int64_t>;
int64_t NumElements(const Shape& shape);
// "[64, 28, 28, 1]".
std::string ShapeString(const Shape& shape);

// Raw bytes on one device, 64-byte aligned on the CPU. Owned by shared_ptr
// from the tensors that view it. CUDA bytes come from the registered
// DeviceRuntime (tensor/device_runtime.h).
class Storage {
 public:
  Storage(size_t bytes, Device device);
  // CPU bytes owned by someone else (e.g. a received RPC body), kept alive
  // by `owner` for as long as this storage lives.
  Storage(void* data, size_t bytes, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  std::shared_ptr<void> owner_;  // set: the bytes are not ours to free
};

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};

class Tensor {
 public:
  // An undefined tensor (no storage); defined() is false.
  Tensor() = default;

  // Uninitialized contents.
  static Tensor Empty(Shape shape, DType dtype = DType::kFloat32, Device device = Device::kCPU);
  static Tensor Zeros(Shape shape, DType dtype = DType::kFloat32);
  static Tensor Full(Shape shape, float value);
  static Tensor Scalar(float value) { return Full({}, value); }
  // REQUIRES: values.size() == NumElements(shape).
  static Tensor FromVector(Shape shape, const std::vector<float>& values);
  static Tensor FromInts(Shape shape, const std::vector<int64_t>& values);
  // The same on `device`: built on the host, then copied there (one upload
  // when device is not kCPU; exactly the CPU versions when it is).
  static Tensor Zeros(Shape shape, DType dtype, Device device);
  static Tensor Full(Shape shape, float value, Device device);
  static Tensor Scalar(float value, Device device) { return Full({}, value, device); }
  static Tensor FromVector(Shape shape, const std::vector<float>& values, Device device);
  static Tensor FromInts(Shape shape, const std::vector<int64_t>& values, Device device);

  // A CPU tensor over `data`, which `owner` keeps alive (no copy): how a
  // received message's tensors become tensors. REQUIRES: data holds
  // NumElements(shape) elements of dtype.
  static Tensor Adopt(std::shared_ptr<void> owner, void* data, Shape shape, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // dim(-1) is the last dimension.
  int64_t dim(int axis) const;
  int64_t numel() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::kCPU; }

  // Typed access to the first element. REQUIRES: dtype matches T.
  template <typename T>
  T* data() {
    EDL_CHECK(dtype_ == DTypeOf<T>::value) << "tensor is " << DTypeName(dtype_);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    EDL_CHECK(dtype_ == DTypeOf<T>::value) << "tensor is " << DTypeName(dtype_);
    return static_cast<const T*>(raw_data());
  }
  float* f32() { return data<float>(); }
  const float* f32() const { return data<float>(); }
  int64_t* i64() { return data<int64_t>(); }
  const int64_t* i64() const { return data<int64_t>(); }
  void* raw_data();
  const void* raw_data() const;

  // A view with a new shape of the same number of elements; one dimension may
  // be -1 and is inferred. REQUIRES: element counts agree.
  Tensor Reshape(Shape shape) const;
  // A view of rows [begin, end) along the first axis.
  Tensor Slice(int64_t begin, int64_t end) const;
  // A deep copy with its own storage.
  Tensor Clone() const;
  // A deep copy on `device` (even when already there). A CUDA copy needs
  // LoadCudaRuntime() (tensor/device_runtime.h) to have succeeded.
  Tensor To(Device device) const;
  // This tensor itself when it is already on `device` (no copy), else
  // To(device). For moving data to where it is needed.
  Tensor On(Device device) const { return this->device() == device ? *this : To(device); }
  // Copies src's elements into this tensor, across devices too.
  // REQUIRES: same numel and dtype.
  void CopyFrom(const Tensor& src);
  // Sets every element (float32 or int64 tensors, on any device).
  void Fill(float value);

  bool SharesStorageWith(const Tensor& other) const {
    return storage_ && storage_ == other.storage_;
  }
  // Keeps this tensor's bytes alive without the tensor (e.g. while a socket
  // sends them); null for an undefined tensor.
  std::shared_ptr<const void> storage_owner() const { return storage_; }
  // Float32 or int64 contents as floats (for tests and small outputs). A
  // device tensor is copied to the host first (a synchronization).
  std::vector<float> ToVector() const;
  // The single element of a one-element float tensor; a device tensor is
  // copied to the host first (a synchronization).
  float item() const;

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes from storage start
  Shape shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::kFloat32;
};

}  // namespace edl::tensor
