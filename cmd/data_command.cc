// edl data index: builds the record indexes of data files ahead of a job,
// in parallel, showing progress (data/record_index.h); with --verify, checks
// every record too (data/record_verifier.h). edl data inspect: what a data
// file holds.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
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
#include "data/record_scanner.h"
#include "data/record_verifier.h"
#include "data/staged_record_index.h"
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
  bool verify = false;
  double log_interval_s = 10;
};

struct FileResult {
  Status status;
  data::RecordIndex index;
  // --verify: a built index, put in place once its file is verified.
  std::unique_ptr<data::StagedRecordIndex> staged;
  bool built = false;
  double seconds = 0;

  const data::RecordIndex& Index() const { return staged ? staged->index() : index; }
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

// Runs `work` in a thread of its own and, until it returns, shows `line`
// (given the seconds elapsed): a bar on a terminal, else a line every
// `log_interval_s`.
void RunWithProgress(const std::function<void()>& work,
                     const std::function<std::string(double)>& line, double log_interval_s) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
  std::thread worker([&] {
    work();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  const bool bar = IsTerminal(STDERR_FILENO);
  const double start = SystemClock().NowSeconds();
  double last = start;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) break;
    }
    const double now = SystemClock().NowSeconds();
    if (now - last < (bar ? 0.5 : log_interval_s)) continue;
    last = now;
    if (bar) {
      SetStderrStatusLine(line(now - start));
    } else {
      EDL_LOG(INFO) << line(now - start);
    }
  }
  worker.join();
  if (bar) SetStderrStatusLine("");
}

// Indexes `path` as the flags say: the fresh cached index, or a new one,
// saved (with --verify, staged until its file is verified).
void IndexFile(const IndexFlags& f, const std::string& path, data::RecordFormat format,
               FileResult& r) {
  const data::IndexOptions options = OptionsFor(path);
  if (!f.verify && !f.rebuild) {
    auto index = data::LoadOrBuildRecordIndex(path, format, f.index_dir, options, &r.built);
    r.status = index.status();
    if (index.ok()) r.index = std::move(*index);
    return;
  }
  if (!f.rebuild) {
    if (auto fresh = data::LoadFreshRecordIndex(path, format, f.index_dir, options)) {
      r.index = std::move(*fresh);
      r.status = Status::Ok();
      return;
    }
  }
  auto index = data::BuildRecordIndex(path, format, options);
  r.status = index.status();
  if (!index.ok()) return;
  r.built = true;
  if (!f.verify) {
    r.index = std::move(*index);
    r.status = data::SaveRecordIndex(r.index, f.index_dir);
    return;
  }
  auto staged = data::StagedRecordIndex::Write(*index, f.index_dir);
  if (staged.ok()) {
    r.staged = std::move(*staged);
  } else if (f.rebuild) {
    r.status = staged.status();
  } else {
    // As LoadOrBuildRecordIndex: an index that cannot be cached is kept in memory.
    EDL_LOG(WARNING) << "cannot cache the index of " << path << ": " << staged.status().message();
    r.index = std::move(*index);
  }
}

// --verify: every record of the files indexed, in parallel over ranges of
// records; a built index is put in place only for a file that passes.
void VerifyFiles(const IndexFlags& f, int threads, std::vector<FileResult>& results) {
  std::vector<const data::RecordIndex*> indexes;
  std::vector<FileResult*> of;
  uint64_t total_bytes = 0;
  for (FileResult& r : results) {
    if (!r.status.ok()) continue;
    indexes.push_back(&r.Index());
    of.push_back(&r);
    total_bytes += r.Index().data_size;
  }
  std::atomic<uint64_t> checked{0};
  std::vector<Status> verdicts;
  RunWithProgress(
      [&] {
        verdicts = data::VerifyRecords(indexes, {.threads = threads, .checked_bytes = &checked});
      },
      [&](double elapsed) {
        const double gb = static_cast<double>(checked.load()) / 1e9;
        char line[256];
        std::snprintf(line, sizeof line,
                      "verifying records: %.2f/%.2f GB of data, %.2f GB/s, %s elapsed", gb,
                      static_cast<double>(total_bytes) / 1e9, gb / elapsed,
                      roles::FormatDuration(elapsed).c_str());
        return std::string(line);
      },
      f.log_interval_s);
  for (size_t i = 0; i < of.size(); ++i) {
    FileResult& r = *of[i];
    if (!verdicts[i].ok()) {
      r.status = verdicts[i];
      r.staged.reset();  // removes the staged index file
    } else if (r.staged) {
      r.status = r.staged->Commit();
    }
  }
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
  std::atomic<uint64_t> bytes_done{0};
  uint64_t total_bytes = 0;
  for (const std::string& p : f.paths) {
    std::error_code ec;
    total_bytes += std::filesystem::file_size(p, ec);
  }
  const int threads = f.jobs > 0 ? f.jobs : UsableCpus();
  const int jobs = std::max(1, std::min<int>(threads, static_cast<int>(f.paths.size())));
  const double start = SystemClock().NowSeconds();
  auto work = [&] {
    for (size_t i = next++; i < f.paths.size(); i = next++) {
      FileResult& r = results[i];
      const double t0 = SystemClock().NowSeconds();
      IndexFile(f, f.paths[i], formats[i], r);
      r.seconds = SystemClock().NowSeconds() - t0;
      std::error_code ec;
      bytes_done += std::filesystem::file_size(f.paths[i], ec);
      ++done;
    }
  };
  RunWithProgress(
      [&] {
        std::vector<std::thread> pool;
        for (int t = 0; t < jobs; ++t) pool.emplace_back(work);
        for (std::thread& t : pool) t.join();
      },
      [&](double elapsed) {
        const double gb = static_cast<double>(bytes_done.load()) / 1e9;
        char line[256];
        std::snprintf(line, sizeof line,
                      "indexing: %zu/%zu files, %.2f/%.2f GB, %.2f GB/s, %s elapsed", done.load(),
                      f.paths.size(), gb, static_cast<double>(total_bytes) / 1e9, gb / elapsed,
                      roles::FormatDuration(elapsed).c_str());
        return std::string(line);
      },
      f.log_interval_s);
  if (f.verify) VerifyFiles(f, threads, results);
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
    const data::RecordIndex& x = r.Index();
    records += x.num_records;
    data_bytes += x.data_size;
    file_bytes += x.file_size;
    std::printf(
        "%s: %llu records (%s%s), %.1f MB%s, %s in %.2f s (%.0f MB/s)%s\n", f.paths[i].c_str(),
        static_cast<unsigned long long>(x.num_records), data::RecordFormatName(x.format),
        x.gzip ? ", gzip" : "", static_cast<double>(x.file_size) / 1e6,
        x.gzip ? Uncompressed(x.data_size).c_str() : "", r.built ? "indexed" : "index up to date",
        r.seconds, r.seconds > 0 ? static_cast<double>(x.file_size) / 1e6 / r.seconds : 0.0,
        f.verify ? ", every record verified" : "");
  }
  if (failed == static_cast<int>(results.size())) return 1;
  std::printf(
      "%zu file(s), %llu records, %.2f GB on disk (%.2f GB of data) in %.2f s with %d "
      "thread(s): %.2f GB/s of data\n",
      results.size() - failed, static_cast<unsigned long long>(records),
      static_cast<double>(file_bytes) / 1e9, static_cast<double>(data_bytes) / 1e9, seconds,
      f.verify ? threads : jobs,
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
  if (format == data::RecordFormat::kCsvRows) {
    auto reader = data::RecordReader::Open(*index, 0);
    if (!reader.ok()) return Fail(reader.status().message());
    std::string row;
    for (int i = 0; i < f.records; ++i) {
      auto got = (*reader)->Next(&row);
      if (!got.ok()) return Fail(got.status().message());
      if (!*got) break;
      std::printf("row %d: %s\n", i, row.c_str());
    }
    return 0;
  }
  // Records checked as `edl data index --verify` checks them.
  auto scanner = data::RecordScanner::Open(*index, 0);
  if (!scanner.ok()) return Fail(scanner.status().message());
  const int wanted = std::max(f.records, f.scan);
  struct Seen {
    std::string kind;
    size_t min_len = SIZE_MAX, max_len = 0;
    int present = 0;
  };
  std::map<std::string, Seen> seen;
  std::vector<std::string> shown;
  int scanned = 0;
  for (; scanned < wanted; ++scanned) {
    auto got = (*scanner)->Next();
    if (!got.ok()) return Fail(got.status().message());
    if (!*got) break;
    auto example = data::ParseExample((*scanner)->record(), (*scanner)->Where());
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
  CLI::App* index = app->add_subcommand(
      "index",
      "Build the record index of data files ahead of a job (counts and record offsets; gzip "
      "access points), cached beside each file. Indexing checks the framing: each TFRecord's "
      "length checksum and that the record fits in the file, that CSV quotes close, gzip "
      "members' checksums; not the records themselves. --verify also reads every record");
  auto f = std::make_shared<IndexFlags>();
  index->add_option("PATH", f->paths, "Data files (CSV or TFRecord, plain or gzip)")
      ->required()
      ->check(CLI::ExistingFile);
  AddFileFlags(*index, f->format, f->index_dir);
  index
      ->add_option("--jobs", f->jobs,
                   "Threads: files indexed at once, and with --verify ranges of records "
                   "checked at once (0: the usable CPUs)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  index->add_flag("--rebuild", f->rebuild, "Index again even where a fresh index exists");
  index->add_flag("--verify", f->verify,
                  "Also check every record, in parallel: a TFRecord payload's checksum and that "
                  "it parses as a tf.train.Example, that a CSV row has as many fields as the "
                  "first row. A bad record fails its file, named with its record number and "
                  "byte, and no index is written for that file");
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
