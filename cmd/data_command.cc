// edl data index: builds the record indexes of data files ahead of a job,
// in parallel, showing progress (data/record_index.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/cpus.h"
#include "base/file.h"
#include "base/logging.h"
#include "cmd/commands.h"
#include "data/record_index.h"
#include "roles/progress.h"

namespace edl::cmd {
namespace {

struct IndexFlags {
  std::vector<std::string> paths;
  std::string format = "auto";
  std::string index_dir;
  int jobs = 0;
  bool rebuild = false;
  double log_interval_s = 10;
};

struct FileResult {
  Status status;
  data::RecordIndex index;
  bool built = false;
  double seconds = 0;
};

std::string Uncompressed(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.1f MB uncompressed)", static_cast<double>(bytes) / 1e6);
  return buf;
}

int RunIndex(const IndexFlags& f) {
  std::vector<data::RecordFormat> formats;
  for (const std::string& p : f.paths) {
    if (f.format == "csv") {
      formats.push_back(data::RecordFormat::kCsvRows);
    } else if (f.format == "tfrecord") {
      formats.push_back(data::RecordFormat::kTfRecord);
    } else {
      auto fmt = data::RecordFormatFromName(p);
      if (!fmt.ok()) return Fail(fmt.status().message());
      formats.push_back(*fmt);
    }
  }
  std::vector<FileResult> results(f.paths.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<uint64_t> bytes_done{0};
  uint64_t total_bytes = 0;
  for (const std::string& p : f.paths) {
    std::error_code ec;
    total_bytes += std::filesystem::file_size(p, ec);
  }
  const int jobs = std::max(1, std::min<int>(f.jobs > 0 ? f.jobs : UsableCpus(),
                                             static_cast<int>(f.paths.size())));
  const double start = SystemClock().NowSeconds();
  auto work = [&] {
    for (size_t i = next++; i < f.paths.size(); i = next++) {
      FileResult& r = results[i];
      const double t0 = SystemClock().NowSeconds();
      if (f.rebuild) {
        auto index = data::BuildRecordIndex(f.paths[i], formats[i]);
        r.status = index.status();
        if (index.ok()) {
          r.index = std::move(*index);
          r.built = true;
          r.status = data::SaveRecordIndex(r.index, f.index_dir);
        }
      } else {
        auto index =
            data::LoadOrBuildRecordIndex(f.paths[i], formats[i], f.index_dir, {}, &r.built);
        r.status = index.status();
        if (index.ok()) r.index = std::move(*index);
      }
      r.seconds = SystemClock().NowSeconds() - t0;
      std::error_code ec;
      bytes_done += std::filesystem::file_size(f.paths[i], ec);
      {
        std::lock_guard<std::mutex> lock(mu);
        ++done;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(work);
  // Progress: a bar on a terminal, else a line every --log_interval s.
  const bool bar = IsTerminal(STDERR_FILENO);
  double last = start;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (cv.wait_for(lock, std::chrono::milliseconds(100),
                      [&] { return done.load() == f.paths.size(); })) {
        break;
      }
    }
    const double now = SystemClock().NowSeconds();
    if (now - last < (bar ? 0.5 : f.log_interval_s)) continue;
    last = now;
    const double gb = static_cast<double>(bytes_done.load()) / 1e9;
    char line[256];
    std::snprintf(line, sizeof line, "indexing: %zu/%zu files, %.2f/%.2f GB, %.2f GB/s, %s elapsed",
                  done.load(), f.paths.size(), gb, static_cast<double>(total_bytes) / 1e9,
                  gb / (now - start), roles::FormatDuration(now - start).c_str());
    if (bar) {
      SetStderrStatusLine(line);
    } else {
      EDL_LOG(INFO) << line;
    }
  }
  for (std::thread& t : threads) t.join();
  if (bar) SetStderrStatusLine("");
  const double seconds = SystemClock().NowSeconds() - start;
  int failed = 0;
  uint64_t records = 0, data_bytes = 0, file_bytes = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const FileResult& r = results[i];
    if (!r.status.ok()) {
      std::fprintf(stderr, "edl: %s\n", r.status.message().c_str());
      ++failed;
      continue;
    }
    const data::RecordIndex& x = r.index;
    records += x.num_records;
    data_bytes += x.data_size;
    file_bytes += x.file_size;
    std::printf("%s: %llu records (%s%s), %.1f MB%s, %s in %.2f s (%.0f MB/s)\n",
                f.paths[i].c_str(), static_cast<unsigned long long>(x.num_records),
                data::RecordFormatName(x.format), x.gzip ? ", gzip" : "",
                static_cast<double>(x.file_size) / 1e6,
                x.gzip ? Uncompressed(x.data_size).c_str() : "",
                r.built ? "indexed" : "index up to date", r.seconds,
                r.seconds > 0 ? static_cast<double>(x.file_size) / 1e6 / r.seconds : 0.0);
  }
  if (failed == static_cast<int>(results.size())) return 1;
  std::printf("%zu file(s), %llu records, %.2f GB on disk (%.2f GB of data) in %.2f s with %d "
              "thread(s): %.2f GB/s of data\n",
              results.size() - failed, static_cast<unsigned long long>(records),
              static_cast<double>(file_bytes) / 1e9, static_cast<double>(data_bytes) / 1e9,
              seconds, jobs, seconds > 0 ? static_cast<double>(data_bytes) / 1e9 / seconds : 0.0);
  return failed ? 1 : 0;
}

}  // namespace

Runner AddDataCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("data", "Work with data files (edl data index)");
  app->require_subcommand(1);
  CLI::App* index = app->add_subcommand(
      "index", "Build the record index of data files ahead of a job (counts and record "
               "offsets; gzip access points), cached beside each file");
  auto f = std::make_shared<IndexFlags>();
  index->add_option("PATH", f->paths, "Data files (CSV or TFRecord, plain or gzip)")
      ->required()
      ->check(CLI::ExistingFile);
  index->add_option("--format", f->format, "auto (from the file name), csv or tfrecord")
      ->check(CLI::IsMember({"auto", "csv", "tfrecord"}))
      ->capture_default_str();
  index->add_option("--data_index_dir", f->index_dir,
                    "Where to keep indexes of files whose directory is not writable");
  index->add_option("--jobs", f->jobs, "Files indexed at once (0: the usable CPUs)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  index->add_flag("--rebuild", f->rebuild, "Index again even where a fresh index exists");
  index->add_option("--log_interval", f->log_interval_s,
                    "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return [f]() { return RunIndex(*f); };
}

}  // namespace edl::cmd
