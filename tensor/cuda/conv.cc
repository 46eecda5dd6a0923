// CudaBackend: 2-D convolutions on cuDNN, NHWC, grouped ones (depthwise and
// separable layers) through cuDNN's group count. Keras kernels (HWIO, I the
// channels of one group) are transposed to cuDNN's OHWI and back; asymmetric "same" padding, which
// cuDNN cannot express, becomes an explicitly padded copy of the image.
// A pass may instead run in NCHW on transposed copies (ConvLayout below).
// The algorithm for each problem is chosen once (by default the first fp32
// algorithm cuDNN's heuristics suggest that runs; with EDL_CUDNN_SEARCH=1
// the fastest fp32 one cuDNN's Find measures) and cached; workspaces come from the
// caching allocator.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/cudnn_descriptors.h"
#include "tensor/cuda/kernels.h"

namespace edl::tensor::cuda {

namespace {

// Padding cuDNN can do itself (symmetric) and what is left to PadImage.
struct PaddingPlan {
  bool explicit_pad;
  int64_t top, bottom, left, right;
};

PaddingPlan PlanPadding(const Conv2DParams& p) {
  PaddingPlan plan{false, p.padding[0], p.padding[1], p.padding[2], p.padding[3]};
  plan.explicit_pad = plan.top != plan.bottom || plan.left != plan.right;
  return plan;
}

// image [n, h, w, c] (unpadded), kernel [kh, kw, c / groups, o],
// out [n, oh, ow, o].
ConvGeometry MakeGeometry(const Shape& image, const Shape& kernel, const Shape& out,
                          const Conv2DParams& p, const PaddingPlan& plan) {
  EDL_CHECK(p.groups >= 1 && image[3] == kernel[2] * p.groups && kernel[3] % p.groups == 0)
      << "grouped convolution: " << image[3] << " input channels, kernel " << kernel[2]
      << " per group, " << p.groups << " groups";
  ConvGeometry g{};
  g.groups = p.groups;
  g.n = image[0];
  g.h = image[1] + (plan.explicit_pad ? plan.top + plan.bottom : 0);
  g.w = image[2] + (plan.explicit_pad ? plan.left + plan.right : 0);
  g.c = image[3];
  g.kh = kernel[0];
  g.kw = kernel[1];
  g.o = kernel[3];
  g.oh = out[1];
  g.ow = out[2];
  g.pad_h = plan.explicit_pad ? 0 : plan.top;
  g.pad_w = plan.explicit_pad ? 0 : plan.left;
  g.sh = p.strides[0];
  g.sw = p.strides[1];
  g.dh = p.dilations[0];
  g.dw = p.dilations[1];
  return g;
}

// Candidate algorithms (as ints) in cuDNN's order of preference, without
// those that need tensor cores (TF32 would not match the fp32 reference).
template <typename Perf>
std::vector<int> Usable(const std::vector<Perf>& perfs, int returned) {
  std::vector<int> algos;
  for (int i = 0; i < returned; ++i) {
    const Perf& perf = perfs[i];
    if (perf.status != CUDNN_STATUS_SUCCESS) continue;
    if (perf.memory > (size_t{1} << 30)) continue;  // a workspace over 1 GiB
    if (perf.mathType == CUDNN_TENSOR_OP_MATH ||
        perf.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      continue;
    }
    algos.push_back(static_cast<int>(perf.algo));
  }
  return algos;
}

// Whether the algorithm for a new problem is measured (EDL_CUDNN_SEARCH=1:
// cuDNN's Find runs every fp32 algorithm once and the fastest is kept)
// rather than taken from cuDNN's heuristics (the default). On an H200 the
// search was faster for the ResNet at batch 64 and MobileNetV2 but slower
// for the CNN and the ResNet at batch 256 (docs/gpu.md), so it is opt-in.
bool SearchAlgorithms() {
  static const bool search = [] {
    const char* env = std::getenv("EDL_CUDNN_SEARCH");
    return env && std::strcmp(env, "1") == 0;
  }();
  return search;
}

// Which passes run in NCHW: cuDNN's fp32 NHWC convolutions convert to NCHW
// internally around some of its kernels, so a pass may instead run on NCHW
// copies that edl's transpose kernel makes (and the result transposed back).
// EDL_CUDNN_NCHW lists the passes by letter: f (forward), d (backward data),
// w (backward filter), or is "none". The default, fd, keeps only the filter
// gradient in NHWC: on an H100 it trained the zoo CNN and ResNet 2 to 19 %
// faster than all-NHWC, and an NCHW filter gradient was slower
// (docs/gpu.md).
struct ConvLayout {
  bool nchw[3];
};

const ConvLayout& Layout() {
  static const ConvLayout layout = [] {
    const char* env = std::getenv("EDL_CUDNN_NCHW");
    const std::string spec = env ? env : "fd";
    ConvLayout l{};
    l.nchw[0] = spec.find('f') != std::string::npos;
    l.nchw[1] = spec.find('d') != std::string::npos;
    l.nchw[2] = spec.find('w') != std::string::npos;
    return l;
  }();
  return layout;
}

bool Nchw(int pass) { return Layout().nchw[pass]; }

// The image x, or (asymmetric padding) a zero-padded copy of it in `buffer`
// (allocated here), as cuDNN convolves it: [g.n, g.h, g.w, g.c].
const float* Padded(const Tensor& x, const ConvGeometry& g, const PaddingPlan& plan,
                    std::unique_ptr<DeviceBuffer>& buffer, DeviceAllocator& allocator,
                    cudaStream_t stream) {
  if (!plan.explicit_pad) return x.f32();
  buffer = std::make_unique<DeviceBuffer>(allocator, sizeof(float) * g.n * g.h * g.w * g.c);
  PadImage(x.f32(), buffer->as<float>(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), plan.top,
           plan.bottom, plan.left, plan.right, stream);
  return buffer->as<float>();
}

// An NHWC image [n, hw, c] as NCHW [n, c, hw] in `buffer` (allocated here),
// or the image itself when the two layouts coincide (c or hw of 1).
const float* ToNchw(const float* x, int64_t n, int64_t hw, int64_t c,
                    std::unique_ptr<DeviceBuffer>& buffer, DeviceAllocator& allocator,
                    cudaStream_t stream) {
  if (c == 1 || hw == 1) return x;
  buffer = std::make_unique<DeviceBuffer>(allocator, sizeof(float) * n * hw * c);
  BatchedTranspose(x, buffer->as<float>(), n, hw, c, stream);
  return buffer->as<float>();
}

// The filter for a pass: Keras HWIO [kh, kw, i, o] as cuDNN's OHWI
// [o, kh, kw, i] or, with nchw, OIHW [o, i, kh, kw].
void FilterFromHwio(const float* hwio, float* out, const ConvGeometry& g, bool nchw,
                    cudaStream_t stream) {
  const int64_t i = g.c / g.groups;
  if (!nchw) {
    Transpose2D(hwio, out, g.kh * g.kw * i, g.o, stream);
    return;
  }
  Dims strides, dims;
  // y axes o, i, kh, kw from HWIO strides.
  dims.v[0] = g.o, strides.v[0] = 1;
  dims.v[1] = i, strides.v[1] = g.o;
  dims.v[2] = g.kh, strides.v[2] = g.kw * i * g.o;
  dims.v[3] = g.kw, strides.v[3] = i * g.o;
  Permute(hwio, strides, out, dims, 4, g.o * i * g.kh * g.kw, stream);
}

// The inverse for the filter gradient: OHWI or OIHW back to HWIO.
void FilterToHwio(const float* in, float* hwio, const ConvGeometry& g, bool nchw,
                  cudaStream_t stream) {
  const int64_t i = g.c / g.groups;
  if (!nchw) {
    Transpose2D(in, hwio, g.o, g.kh * g.kw * i, stream);
    return;
  }
  Dims strides, dims;
  // y axes kh, kw, i, o from OIHW strides.
  dims.v[0] = g.kh, strides.v[0] = g.kw;
  dims.v[1] = g.kw, strides.v[1] = 1;
  dims.v[2] = i, strides.v[2] = g.kh * g.kw;
  dims.v[3] = g.o, strides.v[3] = i * g.kh * g.kw;
  Permute(in, strides, hwio, dims, 4, g.o * i * g.kh * g.kw, stream);
}

}  // namespace

void CudaBackend::RunConvolution(ConvPass pass, bool nchw, const ConvGeometry& g, const float* x,
                                 const float* w, const float* dy, float* out) {
  const TensorDesc xd =
      nchw ? TensorDesc::Nchw(g.n, g.c, g.h, g.w) : TensorDesc::Nhwc(g.n, g.h, g.w, g.c);
  const TensorDesc yd =
      nchw ? TensorDesc::Nchw(g.n, g.o, g.oh, g.ow) : TensorDesc::Nhwc(g.n, g.oh, g.ow, g.o);
  const FilterDesc wd(g.o, g.kh, g.kw, g.c / g.groups, nchw);
  const ConvDesc cd(g.pad_h, g.pad_w, g.sh, g.sw, g.dh, g.dw, g.groups);
  const float one = 1.f, zero = 0.f;
  cudnnHandle_t h = ctx_.dnn;

  auto workspace_size = [&](int algo, size_t* bytes) {
    switch (pass) {
      case ConvPass::kForward:
        return cudnnGetConvolutionForwardWorkspaceSize(h, xd.get(), wd.get(), cd.get(), yd.get(),
                                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                                       bytes);
      case ConvPass::kBackwardData:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, wd.get(), yd.get(), cd.get(), xd.get(),
            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
      case ConvPass::kBackwardFilter:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, xd.get(), yd.get(), cd.get(), wd.get(),
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
    }
    return CUDNN_STATUS_BAD_PARAM;
  };
  auto launch = [&](int algo, void* ws, size_t ws_bytes) {
    switch (pass) {
      case ConvPass::kForward:
        return cudnnConvolutionForward(h, &one, xd.get(), x, wd.get(), w, cd.get(),
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, ws_bytes,
                                       &zero, yd.get(), out);
      case ConvPass::kBackwardData:
        return cudnnConvolutionBackwardData(h, &one, wd.get(), w, yd.get(), dy, cd.get(),
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws,
                                            ws_bytes, &zero, xd.get(), out);
      case ConvPass::kBackwardFilter:
        return cudnnConvolutionBackwardFilter(h, &one, xd.get(), x, yd.get(), dy, cd.get(),
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                              ws, ws_bytes, &zero, wd.get(), out);
    }
    return CUDNN_STATUS_BAD_PARAM;
  };
  auto candidates = [&]() {
    int max = 0, returned = 0;
    switch (pass) {
      case ConvPass::kForward: {
        EDL_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs(max);
        EDL_CUDNN_CHECK((SearchAlgorithms() ? cudnnFindConvolutionForwardAlgorithm
                                            : cudnnGetConvolutionForwardAlgorithm_v7)(
            h, xd.get(), wd.get(), cd.get(), yd.get(), max, &returned, perfs.data()));
        return Usable(perfs, returned);
      }
      case ConvPass::kBackwardData: {
        EDL_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perfs(max);
        EDL_CUDNN_CHECK((SearchAlgorithms() ? cudnnFindConvolutionBackwardDataAlgorithm
                                            : cudnnGetConvolutionBackwardDataAlgorithm_v7)(
            h, wd.get(), yd.get(), cd.get(), xd.get(), max, &returned, perfs.data()));
        return Usable(perfs, returned);
      }
      case ConvPass::kBackwardFilter: {
        EDL_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perfs(max);
        EDL_CUDNN_CHECK((SearchAlgorithms() ? cudnnFindConvolutionBackwardFilterAlgorithm
                                            : cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
            h, xd.get(), yd.get(), cd.get(), wd.get(), max, &returned, perfs.data()));
        return Usable(perfs, returned);
      }
    }
    return std::vector<int>();
  };

  const ConvKey key{static_cast<int>(pass) + (nchw ? 3 : 0),
                    g.n,
                    g.h,
                    g.w,
                    g.c,
                    g.o,
                    g.kh,
                    g.kw,
                    g.sh,
                    g.sw,
                    g.dh,
                    g.dw,
                    g.pad_h,
                    g.pad_w,
                    g.groups};
  std::lock_guard<std::mutex> lock(ctx_.dnn_mu);
  if (auto it = ctx_.conv_choices.find(key); it != ctx_.conv_choices.end()) {
    DeviceBuffer ws(ctx_.allocator, it->second.workspace_bytes);
    EDL_CUDNN_CHECK(launch(it->second.algorithm, ws.data(), ws.bytes()));
    return;
  }
  cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
  for (int algo : candidates()) {
    size_t bytes = 0;
    if ((last = workspace_size(algo, &bytes)) != CUDNN_STATUS_SUCCESS) continue;
    DeviceBuffer ws(ctx_.allocator, bytes);
    if ((last = launch(algo, ws.data(), bytes)) == CUDNN_STATUS_SUCCESS) {
      ctx_.conv_choices[key] = ConvChoice{algo, bytes};
      return;
    }
  }
  EDL_CHECK(false) << "cuDNN has no fp32 algorithm for convolution pass " << static_cast<int>(pass)
                   << " (last status: " << cudnnGetErrorString(last) << ")";
}

void CudaBackend::Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv2DParams& p, Tensor& y) {
  const PaddingPlan plan = PlanPadding(p);
  const ConvGeometry g = MakeGeometry(x.shape(), w.shape(), y.shape(), p, plan);
  const bool nchw = Nchw(0);
  cudaStream_t stream = ctx_.stream;
  DeviceBuffer filter(ctx_.allocator, w.bytes());
  FilterFromHwio(w.f32(), filter.as<float>(), g, nchw, stream);
  std::unique_ptr<DeviceBuffer> padded, image_nchw, out_nchw;
  const float* image = Padded(x, g, plan, padded, ctx_.allocator, stream);
  float* out = y.f32();
  const bool out_transposed = nchw && g.o > 1 && g.oh * g.ow > 1;
  if (nchw) {
    image = ToNchw(image, g.n, g.h * g.w, g.c, image_nchw, ctx_.allocator, stream);
    if (out_transposed) {
      out_nchw = std::make_unique<DeviceBuffer>(ctx_.allocator, y.bytes());
      out = out_nchw->as<float>();
    }
  }
  RunConvolution(ConvPass::kForward, nchw, g, image, filter.as<float>(), nullptr, out);
  if (out_transposed) {
    BatchedTranspose(out, y.f32(), g.n, g.o, g.oh * g.ow, stream);
  }
  if (bias.defined()) AddBias(y.f32(), bias.f32(), g.n * g.oh * g.ow, g.o, stream);
}

void CudaBackend::Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                     Tensor& dx) {
  const PaddingPlan plan = PlanPadding(p);
  const ConvGeometry g = MakeGeometry(dx.shape(), w.shape(), dy.shape(), p, plan);
  const bool nchw = Nchw(1);
  cudaStream_t stream = ctx_.stream;
  DeviceBuffer filter(ctx_.allocator, w.bytes());
  FilterFromHwio(w.f32(), filter.as<float>(), g, nchw, stream);
  const float* grad = dy.f32();
  std::unique_ptr<DeviceBuffer> grad_nchw, out_nchw, padded;
  const int64_t padded_bytes = sizeof(float) * g.n * g.h * g.w * g.c;
  // The NHWC (padded) image gradient; cuDNN writes it directly in NHWC, or
  // into out_nchw to be transposed here.
  float* image_grad = dx.f32();
  if (plan.explicit_pad) {
    padded = std::make_unique<DeviceBuffer>(ctx_.allocator, padded_bytes);
    image_grad = padded->as<float>();
  }
  float* out = image_grad;
  const bool out_transposed = nchw && g.c > 1 && g.h * g.w > 1;
  if (nchw) {
    grad = ToNchw(grad, g.n, g.oh * g.ow, g.o, grad_nchw, ctx_.allocator, stream);
    if (out_transposed) {
      out_nchw = std::make_unique<DeviceBuffer>(ctx_.allocator, padded_bytes);
      out = out_nchw->as<float>();
    }
  }
  RunConvolution(ConvPass::kBackwardData, nchw, g, nullptr, filter.as<float>(), grad, out);
  if (out_transposed) {
    BatchedTranspose(out, image_grad, g.n, g.c, g.h * g.w, stream);
  }
  if (plan.explicit_pad) {
    CropImage(image_grad, dx.f32(), dx.dim(0), dx.dim(1), dx.dim(2), dx.dim(3), plan.top,
              plan.bottom, plan.left, plan.right, stream);
  }
}

void CudaBackend::Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Conv2DParams& p,
                                        Tensor& dw, Tensor& dbias) {
  const PaddingPlan plan = PlanPadding(p);
  const ConvGeometry g = MakeGeometry(x.shape(), dw.shape(), dy.shape(), p, plan);
  const bool nchw = Nchw(2);
  cudaStream_t stream = ctx_.stream;
  std::unique_ptr<DeviceBuffer> padded, image_nchw, grad_nchw;
  const float* image = Padded(x, g, plan, padded, ctx_.allocator, stream);
  const float* grad = dy.f32();
  if (nchw) {
    image = ToNchw(image, g.n, g.h * g.w, g.c, image_nchw, ctx_.allocator, stream);
    grad = ToNchw(grad, g.n, g.oh * g.ow, g.o, grad_nchw, ctx_.allocator, stream);
  }
  DeviceBuffer filter_grad(ctx_.allocator, dw.bytes());
  RunConvolution(ConvPass::kBackwardFilter, nchw, g, image, nullptr, grad, filter_grad.as<float>());
  FilterToHwio(filter_grad.as<float>(), dw.f32(), g, nchw, stream);
  if (dbias.defined()) {
    ColumnSums(dy.f32(), g.n * g.oh * g.ow, g.o, dbias.f32(), ctx_.allocator, stream);
  }
}

}  // namespace edl::tensor::cuda
