// Coalescing sparse rows on the GPU: sort ids (CUB radix sort, carrying each
// row's position), mark the first row of each run of equal ids, number the
// runs with a prefix sum, and sum each run's rows in sorted order (double,
// deterministic). The number of unique ids decides the output size, so this
// is the one launcher that waits for the stream.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

__global__ void IotaKernel(int64_t* v, int64_t n) {
  EDL_GRID_STRIDE(i, n) { v[i] = i; }
}

__global__ void HeadsKernel(const int64_t* keys, int64_t* heads, int64_t n) {
  EDL_GRID_STRIDE(i, n) { heads[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0; }
}

// run[i] is the inclusive count of heads up to i (runs numbered from 1).
__global__ void StartsKernel(const int64_t* keys, const int64_t* run, int64_t* starts,
                             int64_t* out_ids, int64_t n) {
  EDL_GRID_STRIDE(i, n) {
    if (i == 0 || keys[i] != keys[i - 1]) {
      starts[run[i] - 1] = i;
      out_ids[run[i] - 1] = keys[i];
    }
  }
}

__global__ void SumRunsKernel(const float* values, const int64_t* order, const int64_t* starts,
                              int64_t runs, int64_t n, int64_t d, float* out) {
  EDL_GRID_STRIDE(i, runs * d) {
    const int64_t s = i / d, col = i % d;
    const int64_t end = s + 1 < runs ? starts[s + 1] : n;
    double acc = 0;
    for (int64_t p = starts[s]; p < end; ++p) acc += values[order[p] * d + col];
    out[i] = static_cast<float>(acc);
  }
}

}  // namespace

void CoalesceRows(const int64_t* ids, const float* values, int64_t n, int64_t d,
                  const std::function<CoalesceOutputs(int64_t)>& make_outputs,
                  DeviceAllocator& allocator, cudaStream_t stream) {
  if (n == 0) {
    make_outputs(0);
    return;
  }
  EDL_CHECK_LT(n, int64_t{1} << 31) << "CoalesceRows: too many rows";
  const int items = static_cast<int>(n);
  DeviceBuffer positions(allocator, sizeof(int64_t) * n);
  DeviceBuffer keys(allocator, sizeof(int64_t) * n);
  DeviceBuffer order(allocator, sizeof(int64_t) * n);
  DeviceBuffer heads(allocator, sizeof(int64_t) * n);
  DeviceBuffer run(allocator, sizeof(int64_t) * n);
  IotaKernel<<<BlocksFor(n), kThreads, 0, stream>>>(positions.as<int64_t>(), n);
  EDL_CUDA_LAUNCHED();

  size_t sort_bytes = 0, scan_bytes = 0;
  EDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, ids, keys.as<int64_t>(),
                                                 positions.as<int64_t>(), order.as<int64_t>(),
                                                 items, 0, 64, stream));
  EDL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, heads.as<int64_t>(),
                                               run.as<int64_t>(), items, stream));
  DeviceBuffer temp(allocator, std::max<size_t>({sort_bytes, scan_bytes, 1}));
  EDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, ids, keys.as<int64_t>(),
                                                 positions.as<int64_t>(), order.as<int64_t>(),
                                                 items, 0, 64, stream));
  HeadsKernel<<<BlocksFor(n), kThreads, 0, stream>>>(keys.as<int64_t>(), heads.as<int64_t>(), n);
  EDL_CUDA_LAUNCHED();
  EDL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), scan_bytes, heads.as<int64_t>(),
                                               run.as<int64_t>(), items, stream));
  int64_t runs = 0;
  EDL_CUDA_CHECK(cudaMemcpyAsync(&runs, run.as<int64_t>() + n - 1, sizeof(runs),
                                 cudaMemcpyDeviceToHost, stream));
  EDL_CUDA_CHECK(cudaStreamSynchronize(stream));

  CoalesceOutputs out = make_outputs(runs);
  DeviceBuffer starts(allocator, sizeof(int64_t) * runs);
  StartsKernel<<<BlocksFor(n), kThreads, 0, stream>>>(keys.as<int64_t>(), run.as<int64_t>(),
                                                      starts.as<int64_t>(), out.ids, n);
  EDL_CUDA_LAUNCHED();
  if (runs * d > 0) {
    SumRunsKernel<<<BlocksFor(runs * d), kThreads, 0, stream>>>(
        values, order.as<int64_t>(), starts.as<int64_t>(), runs, n, d, out.values);
    EDL_CUDA_LAUNCHED();
  }
}

}  // namespace edl::tensor::cuda
