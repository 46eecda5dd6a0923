// VerifyRecords: what `edl data index --verify` adds to indexing. Indexing
// checks a file's framing (data/record_index.h: TFRecord length checksums
// and that every record fits the file, CSV quotes closed, gzip members'
// CRC-32s); verifying reads every record of indexed files and checks it as
// RecordScanner does (data/record_scanner.h: a TFRecord payload's CRC-32C
// and that it parses as a tf.train.Example, a CSV row's fields), in
// parallel over ranges of records of all the files at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "data/record_index.h"

namespace edl::data {

struct VerifyOptions {
  int threads = 1;
  // About how many uncompressed bytes a range of records read by one thread
  // holds (ranges start at index points, so they are at least `every`
  // records long); 0: from the data's size and the threads, 4 to 64 MiB.
  uint64_t range_bytes = 0;
  // When set, the uncompressed bytes checked so far are added to it as the
  // threads go (for a progress display; read it from any thread).
  std::atomic<uint64_t>* checked_bytes = nullptr;
};

// One Status per index, in order: OK, or the error of its first bad record
// (the lowest-numbered, whatever the threads), naming the file, the record
// and its byte. A file's remaining ranges are left unread once a bad record
// before them is found. Every thread started is joined before it returns.
// REQUIRES: the indexes are fresh and outlive the call.
std::vector<Status> VerifyRecords(const std::vector<const RecordIndex*>& indexes,
                                  const VerifyOptions& options);

}  // namespace edl::data
