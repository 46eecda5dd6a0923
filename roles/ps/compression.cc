#include "roles/ps/compression.h"

#include <cstdint>
#include <cstring>

namespace edl::roles::ps {

using tensor::DType;
using tensor::Tensor;

namespace {

uint16_t ToBFloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float FromBFloat16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

Result<Compression> ParseCompression(std::string_view value, const std::string& flag) {
  if (value == "none" || value.empty()) return Compression::kNone;
  if (value == "bf16") return Compression::kBFloat16;
  if (value == "fp16") return Compression::kFloat16;
  return InvalidArgument(flag + ": unknown gradient compression \"" + std::string(value) +
                         "\" (none, bf16 or fp16)");
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kBFloat16: return "bf16";
    case Compression::kFloat16: return "fp16";
  }
  return "?";
}

bool IsCompressed(const Tensor& t) {
  return t.defined() && (t.dtype() == DType::kBFloat16 || t.dtype() == DType::kFloat16);
}

Tensor Compress(const Tensor& t, Compression c) {
  if (c == Compression::kNone || !t.defined() || t.dtype() != DType::kFloat32) return t;
  const Tensor host = t.On(tensor::Device::kCPU);
  const int64_t n = host.numel();
  const float* x = host.f32();
  if (c == Compression::kBFloat16) {
    Tensor out = Tensor::Empty(host.shape(), DType::kBFloat16);
    auto* y = static_cast<uint16_t*>(out.raw_data());
    for (int64_t i = 0; i < n; ++i) y[i] = ToBFloat16(x[i]);
    return out;
  }
  Tensor out = Tensor::Empty(host.shape(), DType::kFloat16);
  auto* y = static_cast<_Float16*>(out.raw_data());
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<_Float16>(x[i]);
  return out;
}

Tensor Decompress(const Tensor& t) {
  if (!IsCompressed(t)) return t;
  const int64_t n = t.numel();
  Tensor out = Tensor::Empty(t.shape(), DType::kFloat32);
  float* y = out.f32();
  if (t.dtype() == DType::kBFloat16) {
    const auto* x = static_cast<const uint16_t*>(t.raw_data());
    for (int64_t i = 0; i < n; ++i) y[i] = FromBFloat16(x[i]);
  } else {
    const auto* x = static_cast<const _Float16*>(t.raw_data());
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i]);
  }
  return out;
}

}  // namespace edl::roles::ps
