// edl data index: builds the record indexes of data files ahead of a job,
// in parallel, showing progress (data/record_index.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/cpus.h"
#include "base/file.h"
#include "base/logging.h"
#include "cmd/commands.h"
#include "data/data_paths.h"
#include "data/record_index.h"
#include "data/record_reader.h"
#include "data/tf_example.h"
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

// CSV fields are tab-separated in a .tsv file, comma-separated otherwise.
data::IndexOptions OptionsFor(const std::string& path) {
  data::IndexOptions o;
  if (data::FileKindFromName(path) == data::FileKind::kTsv) o.delimiter = '\t';
  return o;
}

// --format: auto (from the file's name), csv or tfrecord.
Result<data::RecordFormat> FormatOf(const std::string& flag, const std::string& path) {
  if (flag == "csv") return data::RecordFormat::kCsvRows;
  if (flag == "tfrecord") return data::RecordFormat::kTfRecord;
  return data::RecordFormatFromName(path);
}

// The flags `index` and `inspect` share.
void AddFileFlags(CLI::App& app, std::string& format, std::string& index_dir) {
  app.add_option("--format", format, "auto (from the file name), csv or tfrecord")
      ->check(CLI::IsMember({"auto", "csv", "tfrecord"}))
      ->capture_default_str();
  app.add_option("--data_index_dir", index_dir,
                 "Where to keep the index of a file whose directory is not writable");
}

std::string Uncompressed(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.1f MB uncompressed)", static_cast<double>(bytes) / 1e6);
  return buf;
}

int RunIndex(const IndexFlags& flags) {
  // One file named twice (or as ./x and x) is indexed once.
  IndexFlags f = flags;
  f.paths.clear();
  std::set<std::string> seen;
  for (const std::string& p : flags.paths) {
    std::error_code ec;
    const std::string key = std::filesystem::weakly_canonical(p, ec).string();
    if (seen.insert(ec ? p : key).second) f.paths.push_back(p);
  }
  std::vector<data::RecordFormat> formats;
  for (const std::string& p : f.paths) {
    auto format = FormatOf(f.format, p);
    if (!format.ok()) return Fail(format.status().message());
    formats.push_back(*format);
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
  const int jobs = std::max(
      1, std::min<int>(f.jobs > 0 ? f.jobs : UsableCpus(), static_cast<int>(f.paths.size())));
  const double start = SystemClock().NowSeconds();
  auto work = [&] {
    for (size_t i = next++; i < f.paths.size(); i = next++) {
      FileResult& r = results[i];
      const double t0 = SystemClock().NowSeconds();
      if (f.rebuild) {
        auto index = data::BuildRecordIndex(f.paths[i], formats[i], OptionsFor(f.paths[i]));
        r.status = index.status();
        if (index.ok()) {
          r.index = std::move(*index);
          r.built = true;
          r.status = data::SaveRecordIndex(r.index, f.index_dir);
        }
      } else {
        auto index = data::LoadOrBuildRecordIndex(f.paths[i], formats[i], f.index_dir,
                                                  OptionsFor(f.paths[i]), &r.built);
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
    std::printf(
        "%s: %llu records (%s%s), %.1f MB%s, %s in %.2f s (%.0f MB/s)\n", f.paths[i].c_str(),
        static_cast<unsigned long long>(x.num_records), data::RecordFormatName(x.format),
        x.gzip ? ", gzip" : "", static_cast<double>(x.file_size) / 1e6,
        x.gzip ? Uncompressed(x.data_size).c_str() : "", r.built ? "indexed" : "index up to date",
        r.seconds, r.seconds > 0 ? static_cast<double>(x.file_size) / 1e6 / r.seconds : 0.0);
  }
  if (failed == static_cast<int>(results.size())) return 1;
  std::printf(
      "%zu file(s), %llu records, %.2f GB on disk (%.2f GB of data) in %.2f s with %d "
      "thread(s): %.2f GB/s of data\n",
      results.size() - failed, static_cast<unsigned long long>(records),
      static_cast<double>(file_bytes) / 1e9, static_cast<double>(data_bytes) / 1e9, seconds, jobs,
      seconds > 0 ? static_cast<double>(data_bytes) / 1e9 / seconds : 0.0);
  return failed ? 1 : 0;
}

struct InspectFlags {
  std::string path;
  std::string format = "auto";
  int records = 3;
  int scan = 1000;
  std::string index_dir;
};

// A value for people: bytes as a quoted, escaped string.
std::string Quoted(const std::string& b) {
  std::string out = "\"";
  for (unsigned char c : b) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 32 && c < 127) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out + "\"";
}

std::string Values(const data::ExampleFeature& f) {
  constexpr size_t kShown = 8;
  std::string out = "[";
  const size_t n = f.size();
  for (size_t i = 0; i < std::min(n, kShown); ++i) {
    if (i) out += ", ";
    char buf[32];
    switch (f.kind) {
      case data::ExampleFeature::Kind::kBytes:
        out += Quoted(f.bytes[i].substr(0, 64)) + (f.bytes[i].size() > 64 ? "..." : "");
        break;
      case data::ExampleFeature::Kind::kFloat:
        std::snprintf(buf, sizeof buf, "%g", f.floats[i]);
        out += buf;
        break;
      case data::ExampleFeature::Kind::kInt64: out += std::to_string(f.ints[i]); break;
      case data::ExampleFeature::Kind::kEmpty: break;
    }
  }
  if (n > kShown) out += ", ... (" + std::to_string(n) + " values)";
  return out + "]";
}

int RunInspect(const InspectFlags& f) {
  auto format_or = FormatOf(f.format, f.path);
  if (!format_or.ok()) return Fail(format_or.status().message());
  const data::RecordFormat format = *format_or;
  auto index = data::LoadOrBuildRecordIndex(f.path, format, f.index_dir, OptionsFor(f.path));
  if (!index.ok()) return Fail(index.status().message());
  std::printf("%s: %s%s, %llu %s, %.1f MB on disk\n", f.path.c_str(),
              data::RecordFormatName(format), index->gzip ? " (gzip)" : "",
              static_cast<unsigned long long>(index->num_records),
              format == data::RecordFormat::kCsvRows ? "rows (a header is a row)" : "records",
              static_cast<double>(index->file_size) / 1e6);
  if (index->gzip && !index->access.empty()) {
    // How much a reader may inflate before a task's first record.
    std::printf(
        "%.1f MB uncompressed; %zu gzip access points, about %.2f MB apart\n",
        static_cast<double>(index->data_size) / 1e6, index->access.size(),
        static_cast<double>(index->data_size) / 1e6 / static_cast<double>(index->access.size()));
  }
  auto reader = data::RecordReader::Open(*index, 0);
  if (!reader.ok()) return Fail(reader.status().message());
  const int wanted = std::max(f.records, f.scan);
  std::string record;
  if (format == data::RecordFormat::kCsvRows) {
    for (int i = 0; i < f.records; ++i) {
      auto got = (*reader)->Next(&record);
      if (!got.ok()) return Fail(got.status().message());
      if (!*got) break;
      std::printf("row %d: %s\n", i, record.c_str());
    }
    return 0;
  }
  struct Seen {
    std::string kind;
    size_t min_len = SIZE_MAX, max_len = 0;
    int present = 0;
  };
  std::map<std::string, Seen> seen;
  std::vector<std::string> shown;
  int scanned = 0;
  for (; scanned < wanted; ++scanned) {
    const uint64_t at = (*reader)->offset();
    auto got = (*reader)->Next(&record);
    if (!got.ok()) return Fail(got.status().message());
    if (!*got) break;
    auto example = data::ParseExample(
        record, f.path + ": record " + std::to_string(scanned) + " at byte " + std::to_string(at));
    if (!example.ok()) return Fail(example.status().message());
    std::string text;
    for (const auto& [name, feature] : *example) {
      Seen& s = seen[name];
      const std::string kind = data::ExampleKindName(feature.kind);
      s.kind = s.kind.empty() || s.kind == kind ? kind : "mixed";
      s.min_len = std::min(s.min_len, feature.size());
      s.max_len = std::max(s.max_len, feature.size());
      ++s.present;
      if (scanned < f.records) text += "  " + name + ": " + Values(feature) + "\n";
    }
    if (scanned < f.records) shown.push_back(text);
  }
  std::printf("features (tf.train.Example) in the first %d record(s):\n", scanned);
  std::printf("  %-28s %-11s %-9s %s\n", "name", "kind", "length", "present");
  for (const auto& [name, s] : seen) {
    const std::string length = s.min_len == s.max_len
                                   ? std::to_string(s.min_len)
                                   : std::to_string(s.min_len) + "-" + std::to_string(s.max_len);
    std::printf("  %-28s %-11s %-9s %d/%d\n", name.c_str(), s.kind.c_str(), length.c_str(),
                s.present, scanned);
  }
  for (size_t i = 0; i < shown.size(); ++i) std::printf("record %zu:\n%s", i, shown[i].c_str());
  return 0;
}

}  // namespace

Runner AddDataCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("data", "Work with data files (edl data index, inspect)");
  app->require_subcommand(1);
  CLI::App* index =
      app->add_subcommand("index",
                          "Build the record index of data files ahead of a job (counts and record "
                          "offsets; gzip access points), cached beside each file");
  auto f = std::make_shared<IndexFlags>();
  index->add_option("PATH", f->paths, "Data files (CSV or TFRecord, plain or gzip)")
      ->required()
      ->check(CLI::ExistingFile);
  AddFileFlags(*index, f->format, f->index_dir);
  index->add_option("--jobs", f->jobs, "Files indexed at once (0: the usable CPUs)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  index->add_flag("--rebuild", f->rebuild, "Index again even where a fresh index exists");
  index
      ->add_option("--log_interval", f->log_interval_s,
                   "Seconds between progress lines when stderr is not a terminal")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::App* inspect =
      app->add_subcommand("inspect",
                          "Show what a data file holds: its record count, for TFRecord the "
                          "tf.train.Example features (name, kind, lengths seen) and a few decoded "
                          "records, for CSV its first rows");
  auto g = std::make_shared<InspectFlags>();
  inspect->add_option("FILE", g->path, "A CSV or TFRecord file, plain or gzip")
      ->required()
      ->check(CLI::ExistingFile);
  AddFileFlags(*inspect, g->format, g->index_dir);
  inspect->add_option("--records", g->records, "Records (rows) to print")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  inspect->add_option("--scan", g->scan, "TFRecord: records whose features are summarized")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  return [f, g, inspect]() {
    if (inspect->parsed()) return RunInspect(*g);
    return RunIndex(*f);
  };
}

}  // namespace edl::cmd
