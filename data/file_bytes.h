// ReadFileBytes: the whole contents of a file, gunzipped when it is gzip
// compressed (detected from its magic bytes, not its name), so every reader
// accepts "x.csv" and "x.csv.gz" alike. Thread-safe.
#pragma once

#include <string>

#include "base/status.h"

namespace edl::data {

// Returns the (decompressed) bytes of `path`. NotFound when it does not
// exist; IoError naming the file for unreadable or corrupt/truncated gzip.
Result<std::string> ReadFileBytes(const std::string& path);

// The last component of a path ("/a/b/c.csv" -> "c.csv"), for messages.
std::string BaseName(const std::string& path);

}  // namespace edl::data
