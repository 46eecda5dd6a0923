#include "data/record_reader.h"

#include <algorithm>
#include <cstring>

#include "data/tfrecord.h"

namespace edl::data {

// ---- RecordReader -----------------------------------------------------------

RecordReader::RecordReader(const RecordIndex& index, std::unique_ptr<ByteStream> stream)
    : index_(index), stream_(std::move(stream)), in_(*stream_) {}

Result<std::unique_ptr<RecordReader>> RecordReader::Open(const RecordIndex& index, uint64_t first) {
  if (first > index.num_records) {
    return InvalidArgument(index.path + ": record " + std::to_string(first) + " of " +
                           std::to_string(index.num_records));
  }
  const uint64_t point = first / index.every;
  const uint64_t at = point < index.offsets.size() ? index.offsets[point] : index.data_size;
  GzipAccessPoint start;
  if (index.gzip) {
    auto it =
        std::upper_bound(index.access.begin(), index.access.end(), at,
                         [](uint64_t v, const GzipAccessPoint& p) { return v < p.out_offset; });
    if (it != index.access.begin()) {
      start = *std::prev(it);
      EDL_ASSIGN_OR_RETURN(start.window, LoadAccessWindow(index, start));
      start.packed_size = 0;
    }
  } else {
    start.out_offset = at;
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::OpenAt(index.path, start));
  std::unique_ptr<RecordReader> reader(new RecordReader(index, std::move(stream)));
  // Decompressed from the access point to the index point, then records.
  reader->record_ = point * index.every;
  EDL_ASSIGN_OR_RETURN(bool there, reader->in_.Skip(at - reader->in_.offset()));
  if (!there) {
    return InvalidArgument(index.path + ": ends at byte " + std::to_string(reader->in_.offset()) +
                           " before indexed byte " + std::to_string(at) +
                           " (changed since it was indexed?)");
  }
  EDL_RETURN_IF_ERROR(reader->Skip(first - reader->record_));
  return reader;
}

Status RecordReader::Skip(uint64_t records) {
  std::string scratch;
  skipping_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{skipping_};
  for (uint64_t i = 0; i < records; ++i) {
    EDL_ASSIGN_OR_RETURN(bool got, Next(&scratch));
    if (!got) {
      return InvalidArgument(index_.path + ": ends after record " + std::to_string(record_) +
                             ", the index counted " + std::to_string(index_.num_records) +
                             " (changed since it was indexed?)");
    }
  }
  return Status::Ok();
}

Result<bool> RecordReader::Next(std::string* record) {
  passed_bad_record_ = false;
  Result<bool> got =
      index_.format == RecordFormat::kTfRecord ? NextTfRecord(record) : NextCsvRow(record);
  if (got.ok() && !*got && record_ < index_.num_records) {
    return InvalidArgument(index_.path + ": ends after record " + std::to_string(record_) +
                           " at byte " + std::to_string(in_.offset()) + ", the index counted " +
                           std::to_string(index_.num_records) +
                           " records (changed since it was indexed?)");
  }
  return got;
}

Result<bool> RecordReader::NextCsvRow(std::string* row) {
  const char delimiter = index_.delimiter;
  while (true) {
    // Scan for the row's end with the indexer's rules, pulling more bytes
    // as needed (offsets from in_.data(): Need may move the buffer).
    size_t i = 0;
    bool quoted = false;
    bool newline = false;
    while (true) {
      if (i == in_.available()) {
        EDL_ASSIGN_OR_RETURN(bool more, in_.Need(i + 1));
        if (!more) break;
      }
      const char* b = in_.data();
      const size_t avail = in_.available();
      if (!quoted) {
        const char* nl = static_cast<const char*>(std::memchr(b + i, '\n', avail - i));
        const char* stop = nl ? nl : b + avail;
        const char* q = static_cast<const char*>(std::memchr(b + i, '"', stop - (b + i)));
        if (q) {
          const size_t k = static_cast<size_t>(q - b);
          quoted = k == 0 || b[k - 1] == delimiter;  // else a literal '"'
          i = k + 1;
          continue;
        }
        if (nl) {
          i = static_cast<size_t>(nl - b);
          newline = true;
          break;
        }
        i = avail;
        continue;
      }
      const char* q = static_cast<const char*>(std::memchr(b + i, '"', avail - i));
      if (!q) {
        i = avail;
        continue;
      }
      const size_t k = static_cast<size_t>(q - b);
      EDL_ASSIGN_OR_RETURN(bool next, in_.Need(k + 2));  // may move the buffer
      if (next && in_.data()[k + 1] == '"') {
        i = k + 2;  // "" inside quotes
      } else {
        quoted = false;
        i = k + 1;
      }
    }
    if (quoted) {
      return InvalidArgument(index_.path + ": the row starting at byte " +
                             std::to_string(in_.offset()) +
                             " opens a quoted field that is never closed");
    }
    size_t len = i;
    if (newline && len > 0 && in_.data()[len - 1] == '\r') --len;
    const size_t consumed = i + (newline ? 1 : 0);
    if (consumed == 0) return false;  // the end of the data
    const bool empty = len == 0;
    if (!empty) row->assign(in_.data(), len);
    in_.Advance(consumed);
    if (!empty) {
      ++record_;
      return true;
    }
  }
}

Result<bool> RecordReader::NextTfRecord(std::string* payload) {
  // Error texts are built only on errors (this runs per record).
  auto at = [&] { return " at byte " + std::to_string(in_.offset()); };
  auto record = [&] { return index_.path + ": record " + std::to_string(record_) + at(); };
  EDL_ASSIGN_OR_RETURN(bool more, in_.Need(kTfRecordHeader));
  if (!more) {
    if (in_.available() > 0) {
      return InvalidArgument(index_.path + ": truncated: " + std::to_string(in_.available()) +
                             " bytes" + at() + " are less than a record header");
    }
    return false;
  }
  uint64_t length = 0;
  if (!ReadTfRecordLength(in_.data(), &length)) {
    return InvalidArgument(record() + ": bad length checksum");
  }
  // A length past the indexed data is a changed or crafted file: refused
  // before it sizes a buffer.
  const uint64_t left = index_.data_size > in_.offset() ? index_.data_size - in_.offset() : 0;
  if (length > kMaxTfRecordLength || kTfRecordHeader + length + 4 > left) {
    return InvalidArgument(record() + " declares " + std::to_string(length) +
                           " bytes, more than the " + std::to_string(left) +
                           " bytes left of the indexed data (changed since it was indexed?)");
  }
  const size_t frame = kTfRecordHeader + static_cast<size_t>(length) + 4;
  EDL_ASSIGN_OR_RETURN(bool whole, in_.Need(frame));
  if (!whole) {
    return InvalidArgument(index_.path + ": truncated: record " + std::to_string(record_) + at() +
                           " declares " + std::to_string(length) +
                           " bytes, but the data ends at byte " +
                           std::to_string(in_.offset() + in_.available()));
  }
  const char* data = in_.data() + kTfRecordHeader;
  // Records skipped on the way to a task's first are framed, not checked:
  // a corrupt one is the business of the task that reads it.
  if (!skipping_) {
    if (!TfRecordPayloadOk(data, length, data + length)) {
      Status bad = InvalidArgument(record() + ": data checksum mismatch");
      in_.Advance(frame);
      ++record_;
      passed_bad_record_ = true;
      return bad;
    }
    payload->assign(data, length);
  }
  in_.Advance(frame);
  ++record_;
  return true;
}

}  // namespace edl::data
