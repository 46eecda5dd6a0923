// Gradient compression on the parameter-server wire (--gradient_compression,
// docs/distributed.md): a worker may send its gradients, and ask for its
// dense parameters, as 16-bit floats, halving the bytes of every push and
// pull. bfloat16 keeps float32's range with 8 bits of mantissa; float16
// (IEEE half) keeps 11 bits of mantissa but overflows past 65504 (to inf)
// and flushes below ~6e-8 to zero. Both round to nearest even. The PS and
// the worker compute in float32: 16-bit tensors only travel.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "roles/protocol/messages.h"
#include "tensor/tensor.h"

namespace edl::roles::ps {

using protocol::Compression;

// "none", "bf16", "fp16" (the flag's values). InvalidArgument naming
// `flag` and the value otherwise.
Result<Compression> ParseCompression(std::string_view value, const std::string& flag);
const char* CompressionName(Compression c);

// A float32 tensor as `c`'s 16-bit dtype (a new tensor); `t` itself for
// kNone or a tensor that is not float32.
tensor::Tensor Compress(const tensor::Tensor& t, Compression c);
// A bfloat16 or float16 tensor as float32 (a new tensor); `t` itself for
// any other dtype.
tensor::Tensor Decompress(const tensor::Tensor& t);
bool IsCompressed(const tensor::Tensor& t);

}  // namespace edl::roles::ps
