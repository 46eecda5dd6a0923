#include "data/idx_reader.h"

#include <algorithm>
#include <filesystem>

#include "base/check.h"

namespace edl::data {

Result<IdxData> IdxData::Open(const std::string& path, const std::string& index_dir) {
  IdxData d;
  d.path = path;
  EDL_ASSIGN_OR_RETURN(d.header, ReadIdxHeader(path));
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::Open(path));
  d.file_size = stream->file_size();
  d.gzip = stream->gzip();
  if (!d.gzip) {
    EDL_RETURN_IF_ERROR(CheckIdxDataSize(path, d.header, d.file_size));
    return d;
  }
  EDL_ASSIGN_OR_RETURN(d.index, LoadOrBuildRecordIndex(path, RecordFormat::kIdx, index_dir));
  if (d.index.num_records != static_cast<uint64_t>(d.header.NumRecords())) {
    return InvalidArgument(path + ": its record index counts " +
                           std::to_string(d.index.num_records) + " records, its header says " +
                           std::to_string(d.header.NumRecords()) + " (changed while indexed?)");
  }
  d.file_size = d.index.file_size;
  return d;
}

Result<std::unique_ptr<IdxReader>> IdxReader::Open(const IdxData& data, int64_t first) {
  EDL_CHECK(first >= 0 && first <= data.header.NumRecords()) << data.path << ": record " << first;
  const uint64_t at = data.header.bytes + static_cast<uint64_t>(first) *
                                              static_cast<uint64_t>(data.header.RecordBytes());
  GzipAccessPoint start;
  if (data.gzip) {
    const auto& access = data.index.access;
    auto it =
        std::upper_bound(access.begin(), access.end(), at,
                         [](uint64_t v, const GzipAccessPoint& p) { return v < p.out_offset; });
    if (it != access.begin()) {
      start = *std::prev(it);
      EDL_ASSIGN_OR_RETURN(start.window, LoadAccessWindow(data.index, start));
      start.packed_size = 0;
    }
  } else {
    start.out_offset = at;
  }
  // A file cut short or grown since: named as such, not as a bad offset.
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(data.path, ec);
  if (!ec && size != data.file_size) {
    return FailedPrecondition(data.path + ": changed since it was opened (" +
                              std::to_string(data.file_size) + " bytes then, " +
                              std::to_string(size) + " now)");
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::OpenAt(data.path, start));
  std::unique_ptr<IdxReader> reader(new IdxReader(data, std::move(stream), first));
  // A gzip file: inflated from the access point up to the record.
  std::string scratch(std::min<uint64_t>(at - reader->stream_->offset(), 64 << 10), '\0');
  while (reader->stream_->offset() < at) {
    const uint64_t step = std::min<uint64_t>(at - reader->stream_->offset(), scratch.size());
    EDL_ASSIGN_OR_RETURN(bool there, reader->ReadFully(scratch.data(), step));
    if (!there) {
      return InvalidArgument(data.path + ": ends at byte " +
                             std::to_string(reader->stream_->offset()) + " before record " +
                             std::to_string(first) + " at byte " + std::to_string(at) +
                             " (changed since it was opened?)");
    }
  }
  return reader;
}

Result<bool> IdxReader::ReadFully(char* out, uint64_t n) {
  while (n > 0) {
    EDL_ASSIGN_OR_RETURN(size_t got, stream_->Read(out, n));
    if (got == 0) return false;
    out += got;
    n -= got;
  }
  return true;
}

Status IdxReader::Read(int64_t n, uint8_t* out) {
  const uint64_t size = static_cast<uint64_t>(data_.header.RecordBytes());
  EDL_ASSIGN_OR_RETURN(bool whole, ReadFully(reinterpret_cast<char*>(out), n * size));
  if (!whole) {
    return InvalidArgument(
        data_.path + ": ends at byte " + std::to_string(stream_->offset()) + ", inside record " +
        std::to_string(data_.header.bytes <= stream_->offset()
                           ? (stream_->offset() - data_.header.bytes) / size
                           : 0) +
        " of " + std::to_string(data_.header.NumRecords()) + " (changed since it was opened?)");
  }
  next_ += n;
  return Status::Ok();
}

}  // namespace edl::data
