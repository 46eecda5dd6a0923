// How fast one reader streams a database table as a worker does
// (scripts/bench/sql_bench.sh): opens URL with the model spec's input
// (planning it, timed), then reads every record on this one thread through
// a cursor in steps of 4,096 records, decoding them into the model's
// inputs. Prints the planning time, the records read, the seconds, and
// this process's CPU seconds (the database server's are its own).
// Usage: edl_sql_read_bench URL SPEC_JSON_FILE [--plan_only]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "data/source.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s URL SPEC_JSON_FILE [--plan_only]\n", argv[0]);
    return 2;
  }
  auto text = edl::ReadFile(argv[2]);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    return 1;
  }
  const nlohmann::json spec = nlohmann::json::parse(*text);
  auto input = edl::data::InputSpecFromJson(spec.at("input").dump(), argv[2]);
  if (!input.ok()) {
    std::fprintf(stderr, "%s\n", input.status().ToString().c_str());
    return 1;
  }
  edl::data::OpenOptions options;
  options.stream = true;
  const auto t0 = Clock::now();
  auto source = edl::data::OpenSource(argv[1], *input, options);
  if (!source.ok()) {
    std::fprintf(stderr, "%s\n", source.status().ToString().c_str());
    return 1;
  }
  const double plan_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const int64_t n = (*source)->num_records();
  std::printf("plan: %lld records in %.2f s\n", static_cast<long long>(n), plan_s);
  if (argc > 3 && std::strcmp(argv[3], "--plan_only") == 0) return 0;
  const double cpu0 = CpuSeconds();
  const auto t1 = Clock::now();
  auto cursor = (*source)->OpenCursor(0, n);
  if (!cursor.ok()) {
    std::fprintf(stderr, "%s\n", cursor.status().ToString().c_str());
    return 1;
  }
  int64_t read = 0;
  for (;;) {
    auto batch = (*cursor)->Next(4096);
    if (!batch.ok()) {
      std::fprintf(stderr, "%s\n", batch.status().ToString().c_str());
      return 1;
    }
    if (batch->size() == 0) break;
    read += batch->size();
  }
  const double s = std::chrono::duration<double>(Clock::now() - t1).count();
  std::printf("read: %lld records in %.2f s (%.0f records/s), reader CPU %.2f s\n",
              static_cast<long long>(read), s, read / s, CpuSeconds() - cpu0);
  return read == n ? 0 : 1;
}
