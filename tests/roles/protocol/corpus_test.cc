// Replays the fuzzer's seed corpus (fuzz/corpus/protocol_codec/) through
// every decoder, so CI exercises it without clang. Regenerate the seeds
// after a codec change with
//   roles_protocol_test --gtest_also_run_disabled_tests
//       --gtest_filter=ProtocolCorpus.DISABLED_WritesTheSeedCorpus
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "roles/protocol/codec.h"
#include "tests/roles/protocol/sample_messages.h"
#include "tests/testing/paths.h"

namespace edl::roles::protocol {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(edl::testing::SourceDir()) / "fuzz/corpus/protocol_codec";

// The seeds: every sample message, and every message with default values.
std::map<std::string, std::string> Seeds() {
  std::map<std::string, std::string> seeds;
  for (auto& [name, bytes] : testing::SampleEncodings()) seeds[name] = bytes;
  seeds["Task.default"] = Encode(Task{});
  seeds["RegisterWorkerRequest.default"] = Encode(RegisterWorkerRequest{});
  seeds["RegisterWorkerResponse.default"] = Encode(RegisterWorkerResponse{});
  seeds["HeartbeatRequest.default"] = Encode(HeartbeatRequest{});
  seeds["HeartbeatResponse.default"] = Encode(HeartbeatResponse{});
  seeds["GetTaskRequest.default"] = Encode(GetTaskRequest{});
  seeds["ReportTaskRequest.default"] = Encode(ReportTaskRequest{});
  seeds["PullDenseRequest.default"] = Encode(PullDenseRequest{});
  seeds["PullDenseResponse.default"] = Encode(PullDenseResponse{});
  seeds["PullRowsRequest.default"] = Encode(PullRowsRequest{});
  seeds["PullRowsResponse.default"] = Encode(PullRowsResponse{});
  seeds["PushGradientsRequest.default"] = Encode(PushGradientsRequest{});
  seeds["PushGradientsResponse.default"] = Encode(PushGradientsResponse{});
  seeds["JoinRingRequest.default"] = Encode(JoinRingRequest{});
  seeds["RingViewRequest.default"] = Encode(RingViewRequest{});
  seeds["RingView.default"] = Encode(RingView{});
  seeds["RingSyncedRequest.default"] = Encode(RingSyncedRequest{});
  return seeds;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Decodes `bytes` as T; what decodes must re-encode to the same bytes.
// Returns whether it decoded.
template <typename T>
bool Replay(const std::string& bytes, const std::string& file) {
  Result<T> decoded = Decode<T>(bytes);
  if (!decoded.ok()) {
    EXPECT_FALSE(decoded.status().message().empty()) << file;
    return false;
  }
  EXPECT_EQ(Encode(*decoded), bytes) << file;
  return true;
}

int ReplayAll(const std::string& bytes, const std::string& file) {
  return Replay<Task>(bytes, file) + Replay<RegisterWorkerRequest>(bytes, file) +
         Replay<RegisterWorkerResponse>(bytes, file) + Replay<HeartbeatRequest>(bytes, file) +
         Replay<HeartbeatResponse>(bytes, file) + Replay<GetTaskRequest>(bytes, file) +
         Replay<ReportTaskRequest>(bytes, file) + Replay<ReportTaskResponse>(bytes, file) +
         Replay<PullDenseRequest>(bytes, file) + Replay<PullDenseResponse>(bytes, file) +
         Replay<PullRowsRequest>(bytes, file) + Replay<PullRowsResponse>(bytes, file) +
         Replay<PushGradientsRequest>(bytes, file) + Replay<PushGradientsResponse>(bytes, file) +
         Replay<JoinRingRequest>(bytes, file) + Replay<RingViewRequest>(bytes, file) +
         Replay<RingView>(bytes, file) + Replay<RingSyncedRequest>(bytes, file) +
         Replay<RingSyncedResponse>(bytes, file);
}

TEST(ProtocolCorpus, EveryFileDecodesStablyOrIsRefusedWithAMessage) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus;
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kCorpus)) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string bytes = ReadFile(e.path());
    const int decoded_as = ReplayAll(bytes, e.path().filename());
    EXPECT_LE(decoded_as, 1) << e.path() << " decodes as more than one message";
  }
  EXPECT_GE(files, static_cast<int>(Seeds().size()));
}

TEST(ProtocolCorpus, HoldsTheCurrentEncodingOfEverySeed) {
  for (const auto& [name, bytes] : Seeds()) {
    const fs::path path = kCorpus / name;
    ASSERT_TRUE(fs::exists(path)) << path
                                  << " is missing; regenerate the seeds (see "
                                     "corpus_test.cc)";
    EXPECT_EQ(ReadFile(path), bytes)
        << path << " is stale; regenerate the seeds (see corpus_test.cc)";
    EXPECT_EQ(ReplayAll(bytes, name), 1) << name;
  }
}

TEST(ProtocolCorpus, DISABLED_WritesTheSeedCorpus) {
  fs::create_directories(kCorpus);
  for (const auto& [name, bytes] : Seeds()) {
    std::ofstream out(kCorpus / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << kCorpus / name;
  }
}

}  // namespace
}  // namespace edl::roles::protocol
