// mpi_allreduce_bench: OpenMPI's MPI_Allreduce (MPI_FLOAT, MPI_SUM, in
// place) measured exactly like bench/allreduce_bench.cc, for comparison.
//
//   mpirun -np N mpi_allreduce_bench [--min_bytes B] [--max_bytes B]
//
// Rank 0 prints "bytes ranks iters seconds_per_op busbw_GBps" per size
// (powers of 4), after the same warm-up, bus bandwidth = 2(N-1)/N * bytes / time, GB = 1e9 bytes.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int Iterations(size_t bytes) {
  size_t target = size_t{512} << 20;
  return static_cast<int>(std::clamp<size_t>(target / bytes, 5, 200000));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  size_t min_bytes = 4096, max_bytes = size_t{64} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    size_t value = static_cast<size_t>(std::atoll(argv[i + 1]));
    if (flag == "--min_bytes") min_bytes = value;
    if (flag == "--max_bytes") max_bytes = value;
  }
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (size_t bytes = min_bytes; bytes <= max_bytes && bytes > 0; bytes *= 4) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    int count = static_cast<int>(data.size());
    int iters = Iterations(bytes);
    for (int i = 0; i < std::max(2, iters / 10); ++i) {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    float sync = 0;
    MPI_Allreduce(MPI_IN_PLACE, &sync, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double seconds = (MPI_Wtime() - start) / iters;
    if (rank == 0) {
      double busbw = 2.0 * (n - 1) / n * static_cast<double>(bytes) / seconds;
      std::printf("%zu %d %d %.9f %.4f\n", bytes, n, iters, seconds, busbw / 1e9);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
