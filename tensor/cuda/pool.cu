// 2-D max and average pooling, NHWC, with TensorFlow's conventions (padded
// taps are skipped; average divides by the in-image taps; the first maximal
// tap takes the gradient). The backward passes gather per input element, so
// they need no atomics and are deterministic.
#include <cmath>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

// Window (i, j)'s in-image rows [h0, h1) and columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};

__device__ Window WindowAt(const PoolGeometry& g, int64_t i, int64_t j) {
  Window win;
  const int64_t top = i * g.sh - g.pad_top, left = j * g.sw - g.pad_left;
  win.h0 = top < 0 ? 0 : top;
  win.h1 = top + g.kh < g.h ? top + g.kh : g.h;
  win.w0 = left < 0 ? 0 : left;
  win.w1 = left + g.kw < g.w ? left + g.kw : g.w;
  return win;
}

__global__ void MaxForwardKernel(const float* x, float* y, int64_t* argmax, PoolGeometry g,
                                 int64_t n) {
  EDL_GRID_STRIDE(yi, n) {
    int64_t rest = yi;
    const int64_t ch = rest % g.c;
    rest /= g.c;
    const int64_t j = rest % g.ow;
    rest /= g.ow;
    const int64_t i = rest % g.oh;
    const int64_t b = rest / g.oh;
    const Window win = WindowAt(g, i, j);
    double acc = -INFINITY;
    float best = -INFINITY;
    int64_t arg = -1;
    for (int64_t hi = win.h0; hi < win.h1; ++hi) {
      for (int64_t wi = win.w0; wi < win.w1; ++wi) {
        const int64_t xi = ((b * g.h + hi) * g.w + wi) * g.c + ch;
        const float v = x[xi];
        if (v > acc) acc = v;
        if (arg < 0 || v > best) {
          best = v;
          arg = xi;
        }
      }
    }
    y[yi] = static_cast<float>(acc);
    if (argmax != nullptr) argmax[yi] = arg;
  }
}

__global__ void AvgForwardKernel(const float* x, float* y, PoolGeometry g, int64_t n) {
  EDL_GRID_STRIDE(yi, n) {
    int64_t rest = yi;
    const int64_t ch = rest % g.c;
    rest /= g.c;
    const int64_t j = rest % g.ow;
    rest /= g.ow;
    const int64_t i = rest % g.oh;
    const int64_t b = rest / g.oh;
    const Window win = WindowAt(g, i, j);
    double acc = 0;
    for (int64_t hi = win.h0; hi < win.h1; ++hi) {
      for (int64_t wi = win.w0; wi < win.w1; ++wi) {
        acc += x[((b * g.h + hi) * g.w + wi) * g.c + ch];
      }
    }
    const int64_t taps = (win.h1 - win.h0) * (win.w1 - win.w0);
    y[yi] = static_cast<float>(acc / taps);
  }
}

// The output rows [lo, hi) whose windows (size k, stride s, padding p)
// contain input row x, clipped to [0, out).
__device__ void Covering(int64_t x, int64_t k, int64_t s, int64_t p, int64_t out, int64_t* lo,
                         int64_t* hi) {
  // Window i covers rows [i*s - p, i*s - p + k).
  const int64_t num = x + p - k + 1;
  int64_t first = num <= 0 ? 0 : (num + s - 1) / s;
  int64_t last = (x + p) / s + 1;  // exclusive
  *lo = first;
  *hi = last < out ? last : out;
}

template <bool kMax>
__global__ void PoolBackwardKernel(const float* dy, const int64_t* argmax, float* dx,
                                   PoolGeometry g, int64_t n) {
  EDL_GRID_STRIDE(xi, n) {
    int64_t rest = xi;
    const int64_t ch = rest % g.c;
    rest /= g.c;
    const int64_t wi = rest % g.w;
    rest /= g.w;
    const int64_t hi = rest % g.h;
    const int64_t b = rest / g.h;
    int64_t i0, i1, j0, j1;
    Covering(hi, g.kh, g.sh, g.pad_top, g.oh, &i0, &i1);
    Covering(wi, g.kw, g.sw, g.pad_left, g.ow, &j0, &j1);
    double acc = 0;
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t yi = ((b * g.oh + i) * g.ow + j) * g.c + ch;
        if (kMax) {
          if (argmax[yi] == xi) acc += dy[yi];
        } else {
          const Window win = WindowAt(g, i, j);
          acc += static_cast<double>(dy[yi]) / ((win.h1 - win.h0) * (win.w1 - win.w0));
        }
      }
    }
    dx[xi] = static_cast<float>(acc);
  }
}

}  // namespace

void MaxPoolForward(const float* x, float* y, int64_t* argmax, const PoolGeometry& g,
                    cudaStream_t stream) {
  const int64_t n = g.n * g.oh * g.ow * g.c;
  if (n == 0) return;
  MaxForwardKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, y, argmax, g, n);
  EDL_CUDA_LAUNCHED();
}

void AvgPoolForward(const float* x, float* y, const PoolGeometry& g, cudaStream_t stream) {
  const int64_t n = g.n * g.oh * g.ow * g.c;
  if (n == 0) return;
  AvgForwardKernel<<<BlocksFor(n), kThreads, 0, stream>>>(x, y, g, n);
  EDL_CUDA_LAUNCHED();
}

void MaxPoolBackward(const float* dy, const int64_t* argmax, float* dx, const PoolGeometry& g,
                     cudaStream_t stream) {
  const int64_t n = g.n * g.h * g.w * g.c;
  if (n == 0) return;
  PoolBackwardKernel<true><<<BlocksFor(n), kThreads, 0, stream>>>(dy, argmax, dx, g, n);
  EDL_CUDA_LAUNCHED();
}

void AvgPoolBackward(const float* dy, float* dx, const PoolGeometry& g, cudaStream_t stream) {
  const int64_t n = g.n * g.h * g.w * g.c;
  if (n == 0) return;
  PoolBackwardKernel<false><<<BlocksFor(n), kThreads, 0, stream>>>(dy, nullptr, dx, g, n);
  EDL_CUDA_LAUNCHED();
}

}  // namespace edl::tensor::cuda
