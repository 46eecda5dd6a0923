// edl_ps_bench: how fast the parameter server moves bytes over loopback,
// compared with a plain TCP stream on the same machine.
//
// Measures, in one run:
//   1. raw loopback TCP: one thread writes --tcp_mib MiB in 4 MiB chunks,
//      another reads and discards (POSIX sockets); once between 4 MiB
//      buffers (in cache: the reference) and once between buffers the
//      size of a dense body (out of cache, as an RPC's bodies are);
//   2. dense: a ParameterServer holding one Dense kernel of
//      --dense_n x --dense_n floats, served by net::RpcServer + ServePs;
//      RemotePs PullDense({-1}) (full pull) and PushGradients(dense grad);
//   3. embedding rows: a table of --vocab x --dim floats; PullRows and
//      PushGradients(sparse) of --rows unique ids (pulled in random order,
//      which is the order the PS creates their rows in, and pushed in
//      ascending order, as a worker's PsClient sends them);
// each also called in-process (no RPC) to separate PS work from transport.
// Payload = bytes of the tensors carried (ids + values for rows). Reports
// GB/s (1e9 bytes/s), rows/s, each GB/s / raw TCP GB/s, and the cores the
// process kept busy while timed (CPU seconds / wall seconds: client and
// server share the process, so it is the whole call's CPU use).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "net/rpc.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/remote_services.h"
#include "roles/ps/parameter_server.h"

namespace {

using edl::roles::CompiledModel;
using edl::roles::ModelOptions;
using edl::roles::NamedTensor;
using edl::roles::protocol::PsService;
using edl::roles::protocol::PullDenseRequest;
using edl::roles::protocol::PullRowsRequest;
using edl::roles::protocol::PushGradientsRequest;
using edl::roles::protocol::SparseGradient;
using edl::tensor::DType;
using edl::tensor::Tensor;
using Clock = std::chrono::steady_clock;

struct Flags {
  int64_t tcp_mib = 2048;
  int64_t dense_n = 4096;
  int64_t vocab = 1000000;
  int64_t dim = 64;
  int64_t rows = 100000;
  int reps = 20;
  int warmup = 2;
  int server_threads = 2;
  std::string only;  // run only the benchmarks whose "name path" contains this
};

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// CPU seconds used by all of this process's threads so far.
double ProcessCpuSeconds() {
  timespec ts{};
  EDL_CHECK(::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// ---- 1. raw TCP -----------------------------------------------------------

// Streams `total_bytes` over loopback: one thread writes from a buffer of
// `buffer_bytes` (at successive offsets, up to 4 MiB per write), another
// reads into its own buffer of that size (at successive offsets). With
// 4 MiB both buffers stay in cache; with a buffer the size of an RPC body
// they do not, as an RPC's do not.
double TcpGbPerSec(int64_t total_bytes, size_t buffer_bytes = size_t{4} << 20) {
  const size_t kWrite = size_t{4} << 20;
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  EDL_CHECK(listener >= 0) << std::strerror(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EDL_CHECK(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  EDL_CHECK(::listen(listener, 1) == 0);
  socklen_t len = sizeof addr;
  EDL_CHECK(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);

  int64_t received = 0;
  std::thread reader([&] {
    int fd = ::accept(listener, nullptr, nullptr);
    EDL_CHECK(fd >= 0) << std::strerror(errno);
    std::vector<char> buf(buffer_bytes, 'y');
    for (;;) {
      const size_t at = static_cast<size_t>(received) % buffer_bytes;
      ssize_t n = ::read(fd, buf.data() + at, buffer_bytes - at);
      if (n <= 0) break;
      received += n;
    }
    ::close(fd);
  });
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EDL_CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  std::vector<char> data(buffer_bytes, 'x');
  const auto t0 = Clock::now();
  int64_t sent = 0;
  while (sent < total_bytes) {
    const size_t at = static_cast<size_t>(sent) % buffer_bytes;
    const size_t want =
        std::min<int64_t>({static_cast<int64_t>(kWrite), static_cast<int64_t>(buffer_bytes - at),
                           total_bytes - sent});
    size_t off = 0;
    while (off < want) {
      ssize_t n = ::write(fd, data.data() + at + off, want - off);
      EDL_CHECK(n > 0) << std::strerror(errno);
      off += n;
    }
    sent += want;
  }
  ::shutdown(fd, SHUT_WR);
  reader.join();  // until the last byte is read
  const auto t1 = Clock::now();
  ::close(fd);
  ::close(listener);
  EDL_CHECK(received == total_bytes) << received << " != " << total_bytes;
  return total_bytes / Seconds(t0, t1) / 1e9;
}

// ---- models ------------------------------------------------------------

CompiledModel Compile(const std::string& dir, const std::string& name, const std::string& layers) {
  const std::string spec =
      R"({"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [)" + layers +
      R"(]}}, "loss": "mse", "optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.001}}})";
  const std::string path = dir + "/" + name + ".json";
  std::ofstream(path) << spec;
  ModelOptions options;
  options.model_def = path;
  options.seed = 1;
  auto cm = edl::roles::CompileModel(options);
  EDL_CHECK(cm.ok()) << cm.status().message();
  return std::move(cm).value();
}

std::unique_ptr<edl::roles::ps::ParameterServer> MakePs(CompiledModel cm) {
  edl::roles::ps::ParameterServerOptions options;  // 1 PS, async
  auto ps = edl::roles::ps::ParameterServer::Create(options, std::move(cm));
  EDL_CHECK(ps.ok()) << ps.status().message();
  return std::move(ps).value();
}

// ---- timing -----------------------------------------------------------

struct Row {
  std::string what;
  std::string path;  // "rpc" or "in-process"
  double bytes_per_call = 0;
  double rows_per_call = 0;  // 0 = not a rows benchmark
  double median_s = 0;
  double best_s = 0;
  double cores = 0;  // process CPU seconds / wall seconds over the reps
};

// Runs `call` warmup + reps times.
Row Measure(const Flags& f, std::string what, std::string path, double bytes, double rows,
            const std::function<void()>& call) {
  if (!f.only.empty() && (what + " " + path).find(f.only) == std::string::npos) {
    return Row{std::move(what), std::move(path), bytes, rows, 0, 0, 0};  // skipped
  }
  for (int i = 0; i < f.warmup; ++i) call();
  std::vector<double> s;
  const double cpu0 = ProcessCpuSeconds();
  const auto wall0 = Clock::now();
  for (int i = 0; i < f.reps; ++i) {
    const auto t0 = Clock::now();
    call();
    s.push_back(Seconds(t0, Clock::now()));
  }
  const double cores = (ProcessCpuSeconds() - cpu0) / Seconds(wall0, Clock::now());
  std::sort(s.begin(), s.end());
  return Row{std::move(what), std::move(path), bytes, rows, s[s.size() / 2], s.front(), cores};
}

int64_t ArgInt(const char* arg, const char* name, int64_t current) {
  const std::string prefix = std::string("--") + name + "=";
  if (std::strncmp(arg, prefix.c_str(), prefix.size()) == 0) {
    return std::atoll(arg + prefix.size());
  }
  return current;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--help") == 0) {
      std::printf(
          "usage: edl_ps_bench [--tcp_mib=2048] [--dense_n=4096] [--vocab=1000000]\n"
          "  [--dim=64] [--rows=100000] [--reps=20] [--warmup=2] [--server_threads=2]\n"
          "  [--only=SUBSTRING]  (only the benchmarks whose \"name path\" contains it,\n"
          "                       e.g. --only=\"PushGradients(sparse) rpc\")\n");
      return 0;
    }
    f.tcp_mib = ArgInt(a, "tcp_mib", f.tcp_mib);
    f.dense_n = ArgInt(a, "dense_n", f.dense_n);
    f.vocab = ArgInt(a, "vocab", f.vocab);
    f.dim = ArgInt(a, "dim", f.dim);
    f.rows = ArgInt(a, "rows", f.rows);
    f.reps = static_cast<int>(ArgInt(a, "reps", f.reps));
    f.warmup = static_cast<int>(ArgInt(a, "warmup", f.warmup));
    f.server_threads = static_cast<int>(ArgInt(a, "server_threads", f.server_threads));
    if (std::strncmp(a, "--only=", 7) == 0) f.only = a + 7;
  }
  EDL_CHECK(f.reps > 0 && f.rows <= f.vocab && f.dense_n > 0) << "bad flags";

  std::printf(
      "edl_ps_bench: nproc=%u  tcp=%lld MiB  dense=%lldx%lld f32  "
      "table=%lldx%lld f32  rows=%lld  reps=%d (+%d warm-up)  "
      "server_threads=%d\n",
      std::thread::hardware_concurrency(), (long long)f.tcp_mib, (long long)f.dense_n,
      (long long)f.dense_n, (long long)f.vocab, (long long)f.dim, (long long)f.rows, f.reps,
      f.warmup, f.server_threads);
  std::fflush(stdout);

  const std::string dir =
      (std::filesystem::temp_directory_path() / ("edl_ps_bench_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);

  // 1. Raw TCP (best of 3 runs).
  double tcp = 0;
  const double tcp_cpu0 = ProcessCpuSeconds();
  const auto tcp_wall0 = Clock::now();
  for (int i = 0; i < 3; ++i) tcp = std::max(tcp, TcpGbPerSec(f.tcp_mib << 20));
  const double tcp_cores = (ProcessCpuSeconds() - tcp_cpu0) / Seconds(tcp_wall0, Clock::now());
  // The same stream between buffers the size of a dense body (which do not
  // fit in cache): what the transport alone can reach for an RPC's bytes.
  const size_t cold_buffer = static_cast<size_t>(f.dense_n * f.dense_n) * sizeof(float);
  double tcp_cold = 0;
  for (int i = 0; i < 3; ++i) {
    tcp_cold = std::max(tcp_cold, TcpGbPerSec(f.tcp_mib << 20, std::max(cold_buffer, size_t{1})));
  }

  // One PS holding both the dense kernel and the table, served over RPC.
  const std::string n = std::to_string(f.dense_n);
  CompiledModel dense_cm = Compile(
      dir, "dense",
      R"({"class_name": "InputLayer", "config": {"name": "x", "batch_input_shape": [null, )" + n +
          R"(]}}, {"class_name": "Dense", "config": {"name": "dense", "units": )" + n + "}}");
  CompiledModel emb_cm = Compile(
      dir, "emb",
      R"({"class_name": "InputLayer", "config": {"name": "ids", "batch_input_shape": [null, 1], "dtype": "int32"}},)"
      R"({"class_name": "Embedding", "config": {"name": "emb", "input_dim": )" +
          std::to_string(f.vocab) + R"(, "output_dim": )" + std::to_string(f.dim) + "}}");
  auto dense_ps = MakePs(std::move(dense_cm));
  auto emb_ps = MakePs(std::move(emb_cm));

  edl::net::ServerOptions so;
  so.secret = "bench";
  so.num_threads = f.server_threads;
  so.max_body_bytes = size_t{2} << 30;
  edl::net::RpcServer dense_server(so), emb_server(so);
  edl::roles::protocol::ServePs(*dense_ps, dense_server);
  edl::roles::protocol::ServePs(*emb_ps, emb_server);
  EDL_CHECK(dense_server.Start().ok());
  EDL_CHECK(emb_server.Start().ok());
  const edl::net::Millis deadline{600000};
  edl::roles::protocol::RemotePs dense_remote("127.0.0.1", dense_server.port(), "bench", deadline);
  edl::roles::protocol::RemotePs emb_remote("127.0.0.1", emb_server.port(), "bench", deadline);

  // Payloads.
  double dense_bytes = 0;
  {
    auto r = dense_ps->PullDense(PullDenseRequest{-1});
    EDL_CHECK(r.ok()) << r.status().message();
    for (const NamedTensor& p : r->params) dense_bytes += p.value.bytes();
  }
  PushGradientsRequest dense_push;
  dense_push.dense.push_back({"dense/kernel", Tensor::Full({f.dense_n, f.dense_n}, 1e-6f)});
  const double dense_push_bytes = dense_push.dense[0].value.bytes();

  std::vector<int64_t> all(f.vocab);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937_64(7));
  all.resize(f.rows);
  PullRowsRequest pull_rows{"emb/embeddings", Tensor::FromInts({f.rows}, all)};
  // A worker's PsClient pushes each id once, in ascending order (Coalesce's
  // output), which is not the order the PS created the rows in.
  std::vector<int64_t> ascending(all);
  std::sort(ascending.begin(), ascending.end());
  PushGradientsRequest rows_push;
  rows_push.sparse.push_back(SparseGradient{"emb/embeddings", Tensor::FromInts({f.rows}, ascending),
                                            Tensor::Full({f.rows, f.dim}, 1e-6f)});
  const double rows_bytes = f.rows * (8.0 + 4.0 * f.dim);

  auto ok = [](const auto& r) { EDL_CHECK(r.ok()) << r.status().message(); };
  // The rows exist before anything is timed, created in the pull's (random)
  // order, whichever benchmarks --only keeps: a push alone would otherwise
  // create them in its ascending order and then find them in address order.
  ok(emb_ps->PullRows(pull_rows));
  std::vector<Row> rows;
  for (const char* path : {"rpc", "in-process"}) {
    const bool rpc = std::strcmp(path, "rpc") == 0;
    PsService& dps = rpc ? static_cast<PsService&>(dense_remote) : *dense_ps;
    PsService& eps = rpc ? static_cast<PsService&>(emb_remote) : *emb_ps;
    rows.push_back(Measure(f, "dense PullDense(full)", path, dense_bytes, 0, [&] {
      auto r = dps.PullDense(PullDenseRequest{-1});
      ok(r);
      EDL_CHECK(!r->params.empty());
    }));
    rows.push_back(Measure(f, "dense PushGradients", path, dense_push_bytes, 0,
                           [&] { ok(dps.PushGradients(dense_push)); }));
    rows.push_back(Measure(f, "rows PullRows", path, rows_bytes, f.rows, [&] {
      auto r = eps.PullRows(pull_rows);
      ok(r);
      EDL_CHECK(r->values.numel() == f.rows * f.dim);
    }));
    rows.push_back(Measure(f, "rows PushGradients(sparse)", path, rows_bytes, f.rows,
                           [&] { ok(eps.PushGradients(rows_push)); }));
  }
  dense_server.Stop();
  emb_server.Stop();
  std::filesystem::remove_all(dir);

  std::printf("\n%-28s %-10s %10s %10s %9s %12s %10s %6s\n", "benchmark", "path", "MB/call",
              "median ms", "GB/s", "rows/s", "vs TCP", "cores");
  std::printf("%-28s %-10s %10.1f %10s %9.3f %12s %10s %6.2f\n", "raw TCP stream", "socket",
              f.tcp_mib * 1048576.0 / 1e6, "-", tcp, "-", "1.000", tcp_cores);
  std::printf("%-28s %-10s %10.1f %10s %9.3f %12s %10.3f %6s\n", "raw TCP, body-sized buffers",
              "socket", f.tcp_mib * 1048576.0 / 1e6, "-", tcp_cold, "-", tcp_cold / tcp, "-");
  for (const Row& r : rows) {
    if (r.median_s == 0) continue;  // skipped by --only
    const double gbs = r.bytes_per_call / r.median_s / 1e9;
    char rps[32] = "-";
    if (r.rows_per_call > 0) std::snprintf(rps, sizeof rps, "%.3g", r.rows_per_call / r.median_s);
    std::printf("%-28s %-10s %10.1f %10.2f %9.3f %12s %10.3f %6.2f\n", r.what.c_str(),
                r.path.c_str(), r.bytes_per_call / 1e6, r.median_s * 1e3, gbs, rps, gbs / tcp,
                r.cores);
  }
  std::printf(
      "\nGB/s = payload tensor bytes (ids + values for rows) / median seconds per call;\n"
      "vs TCP = GB/s / raw TCP GB/s (best of 3 streams);\n"
      "cores = the process's CPU seconds / wall seconds while timed (of %u).\n",
      std::thread::hardware_concurrency());
  return 0;
}
