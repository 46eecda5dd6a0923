#include "roles/protocol/codec.h"

#include <gtest/gtest.h>

#include "roles/protocol/wire.h"
#include "tests/roles/protocol/sample_messages.h"

namespace edl::roles::protocol {
namespace {

using namespace testing;  // NOLINT: the sample helpers
using tensor::DType;
using tensor::Tensor;

template <typename T>
struct Sample;
#define EDL_SAMPLE(Type)                          \
  template <>                                     \
  struct Sample<Type> {                           \
    static Type Make() { return Sample##Type(); } \
    static constexpr const char* kName = #Type;   \
  };
EDL_SAMPLE(Task)
EDL_SAMPLE(RegisterWorkerRequest)
EDL_SAMPLE(RegisterWorkerResponse)
EDL_SAMPLE(HeartbeatRequest)
EDL_SAMPLE(HeartbeatResponse)
EDL_SAMPLE(GetTaskRequest)
EDL_SAMPLE(ReportTaskRequest)
EDL_SAMPLE(ReportTaskResponse)
EDL_SAMPLE(PullDenseRequest)
EDL_SAMPLE(PullDenseResponse)
EDL_SAMPLE(PullRowsRequest)
EDL_SAMPLE(PullRowsResponse)
EDL_SAMPLE(PushGradientsRequest)
EDL_SAMPLE(PushGradientsResponse)
EDL_SAMPLE(JoinRingRequest)
EDL_SAMPLE(RingViewRequest)
EDL_SAMPLE(RingView)
EDL_SAMPLE(RingSyncedRequest)
EDL_SAMPLE(RingSyncedResponse)
#undef EDL_SAMPLE

template <typename T>
class EveryMessage : public ::testing::Test {};
using AllMessages =
    ::testing::Types<Task, RegisterWorkerRequest, RegisterWorkerResponse, HeartbeatRequest,
                     HeartbeatResponse, GetTaskRequest, ReportTaskRequest, ReportTaskResponse,
                     PullDenseRequest, PullDenseResponse, PullRowsRequest, PullRowsResponse,
                     PushGradientsRequest, PushGradientsResponse, JoinRingRequest, RingViewRequest,
                     RingView, RingSyncedRequest, RingSyncedResponse>;
TYPED_TEST_SUITE(EveryMessage, AllMessages);

// The status message starts with the message's name.
void ExpectRefused(const Status& s, const std::string& name) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(name, 0), 0u) << s.message();
}

TYPED_TEST(EveryMessage, DecodesToWhatWasEncoded) {
  const TypeParam original = Sample<TypeParam>::Make();
  Result<TypeParam> decoded = Decode<TypeParam>(Encode(original));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSame(*decoded, original);
}

TYPED_TEST(EveryMessage, RoundTripsDefaultValues) {
  Result<TypeParam> decoded = Decode<TypeParam>(Encode(TypeParam{}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSame(*decoded, TypeParam{});
}

TYPED_TEST(EveryMessage, ReencodesToTheSameBytes) {
  const std::string bytes = Encode(Sample<TypeParam>::Make());
  Result<TypeParam> decoded = Decode<TypeParam>(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(Encode(*decoded), bytes);
}

TYPED_TEST(EveryMessage, StartsWithItsTagAndTheWireVersion) {
  const std::string bytes = Encode(Sample<TypeParam>::Make());
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_STREQ(MessageName(static_cast<uint8_t>(bytes[0])), Sample<TypeParam>::kName);
  EXPECT_EQ(static_cast<uint8_t>(bytes[1]), kWireVersion);
}

TYPED_TEST(EveryMessage, RefusesEveryTruncatedPrefix) {
  const std::string bytes = Encode(Sample<TypeParam>::Make());
  for (size_t n = 0; n < bytes.size(); ++n) {
    Result<TypeParam> decoded = Decode<TypeParam>(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(decoded.ok()) << "prefix of " << n << " of " << bytes.size() << " bytes";
    ExpectRefused(decoded.status(), Sample<TypeParam>::kName);
    if (n >= 2) {
      EXPECT_NE(decoded.status().message().find(" left"), std::string::npos)
          << decoded.status().message();
    }
  }
}

TYPED_TEST(EveryMessage, RefusesTrailingBytes) {
  std::string bytes = Encode(Sample<TypeParam>::Make());
  bytes += "xy";
  Result<TypeParam> decoded = Decode<TypeParam>(bytes);
  ASSERT_FALSE(decoded.ok());
  ExpectRefused(decoded.status(), Sample<TypeParam>::kName);
  EXPECT_NE(decoded.status().message().find("2 trailing bytes"), std::string::npos)
      << decoded.status().message();
}

TYPED_TEST(EveryMessage, RefusesAnotherWireVersion) {
  std::string bytes = Encode(Sample<TypeParam>::Make());
  bytes[1] = static_cast<char>(kWireVersion + 1);
  Result<TypeParam> decoded = Decode<TypeParam>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), std::string(Sample<TypeParam>::kName) + ": wire version " +
                                            std::to_string(kWireVersion + 1) +
                                            ", this build speaks version " +
                                            std::to_string(kWireVersion));
}

TYPED_TEST(EveryMessage, RefusesEveryOtherMessage) {
  const std::string own = Encode(Sample<TypeParam>::Make());
  for (const auto& [name, bytes] : SampleEncodings()) {
    if (name == Sample<TypeParam>::kName) continue;
    Result<TypeParam> decoded = Decode<TypeParam>(bytes);
    ASSERT_FALSE(decoded.ok()) << name;
    EXPECT_EQ(decoded.status().message(),
              std::string(Sample<TypeParam>::kName) + ": expected tag " +
                  std::to_string(static_cast<uint8_t>(own[0])) + ", got tag " +
                  std::to_string(static_cast<uint8_t>(bytes[0])) + " (" + name + ")");
  }
}

TEST(Codec, NamesAnUnknownTag) {
  Result<Task> decoded = Decode<Task>(std::string("\xC8\x01", 2));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "Task: expected tag 1, got tag 200 (unknown)");
}

TEST(Codec, RefusesAnEmptyBody) {
  Result<HeartbeatRequest> decoded = Decode<HeartbeatRequest>("");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "HeartbeatRequest: truncated: 0 bytes, a message starts with a 2-byte tag and version");
}

// Raw bytes of a message: its header, then whatever `body` writes.
template <typename F>
std::string Raw(MessageTag tag, F body) {
  Writer w;
  w.U8(static_cast<uint8_t>(tag));
  w.U8(kWireVersion);
  body(w);
  return std::move(w).Take();
}

TEST(Codec, NamesTheVectorItemAndFieldOfATruncatedTensor) {
  PushGradientsRequest r = SamplePushGradientsRequest();
  r.sparse.clear();
  r.state.clear();
  r.dense[2].value = Tensor::Zeros({1000, 1000});
  std::string bytes = Encode(r);
  // Keep 12 of the tensor's bytes (and drop the empty sparse and state
  // vector counts and the two pull fields).
  bytes.resize(bytes.size() - 4 - 4000000 + 12);
  Result<PushGradientsRequest> decoded = Decode<PushGradientsRequest>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "PushGradientsRequest.dense[2].value: tensor float32[1000, 1000] claims "
            "4000000 bytes after 17 bytes of padding, 29 left");
}

TEST(Codec, RefusesAnUnknownDType) {
  std::string bytes = Encode(SamplePullRowsResponse());
  bytes[2] = 9;  // the dtype byte of `values`
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "PullRowsResponse.values: unknown tensor dtype 9");
}

TEST(Codec, RefusesATensorOfRankNine) {
  std::string bytes = Raw(MessageTag::kPullRowsResponse, [](Writer& w) {
    w.U8(0);
    w.Varint(9);
    for (int i = 0; i < 9; ++i) w.Varint(1);
    w.Bytes("abcd", 4);
  });
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "PullRowsResponse.values: tensor rank 9 exceeds 8");
}

TEST(Codec, RefusesANegativeDim) {
  std::string bytes = Raw(MessageTag::kPullRowsResponse, [](Writer& w) {
    w.U8(0);
    w.Varint(2);
    w.Varint(1);
    w.Varint(static_cast<uint64_t>(int64_t{-3}));
  });
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "PullRowsResponse.values: tensor dim 1 is negative (-3)");
}

TEST(Codec, RefusesDimsWhoseProductOverflows) {
  for (uint64_t zero_dim : {0, 1}) {  // a zero dim does not excuse the others
    std::string bytes = Raw(MessageTag::kPullRowsResponse, [&](Writer& w) {
      w.U8(static_cast<uint8_t>(DType::kInt64));
      w.Varint(3);
      w.Varint(uint64_t{1} << 40);
      w.Varint(zero_dim);
      w.Varint(uint64_t{1} << 40);
    });
    Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_NE(decoded.status().message().find("overflows 64 bits"), std::string::npos)
        << decoded.status().message();
  }
  // Element count fits, bytes do not.
  std::string bytes = Raw(MessageTag::kPullRowsResponse, [](Writer& w) {
    w.U8(static_cast<uint8_t>(DType::kInt64));
    w.Varint(1);
    w.Varint(uint64_t{1} << 62);
  });
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("overflows 64 bits"), std::string::npos)
      << decoded.status().message();
}

TEST(Codec, RefusesAHugeTensorWithoutAllocatingIt) {
  std::string bytes = Raw(MessageTag::kPullRowsResponse, [](Writer& w) {
    w.U8(static_cast<uint8_t>(DType::kFloat32));
    w.Varint(2);
    w.Varint(1u << 30);
    w.Varint(1u << 30);
  });
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "PullRowsResponse.values: tensor float32[1073741824, 1073741824] claims "
            "4611686018427387904 bytes after 50 bytes of padding, 0 left");
}

TEST(Codec, RefusesAStringLongerThanTheCap) {
  std::string bytes =
      Raw(MessageTag::kRegisterWorkerRequest, [](Writer& w) { w.Varint(uint64_t{1} << 40); });
  Result<RegisterWorkerRequest> decoded = Decode<RegisterWorkerRequest>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "RegisterWorkerRequest.name: string length 1099511627776 exceeds the "
            "67108864-byte cap");
}

TEST(Codec, RefusesAStringLongerThanTheBytesLeft) {
  std::string bytes = Raw(MessageTag::kRegisterWorkerRequest, [](Writer& w) {
    w.Varint(100);
    w.Bytes("abc", 3);
  });
  Result<RegisterWorkerRequest> decoded = Decode<RegisterWorkerRequest>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "RegisterWorkerRequest.name: truncated: string needs 100 bytes, 3 left");
}

TEST(Codec, RefusesAVectorLongerThanTheCap) {
  std::string bytes = Raw(MessageTag::kPullDenseResponse, [](Writer& w) {
    w.I64(1);
    w.Varint(1'000'000'000);
  });
  Result<PullDenseResponse> decoded = Decode<PullDenseResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "PullDenseResponse.params: vector of 1000000000 items exceeds the cap of 100000000");
}

TEST(Codec, RefusesAVectorLongerThanTheBytesLeftBeforeAllocating) {
  std::string bytes = Raw(MessageTag::kPullDenseResponse, [](Writer& w) {
    w.I64(1);
    w.Varint(50'000'000);
    w.Bytes("abcde", 5);
  });
  Result<PullDenseResponse> decoded = Decode<PullDenseResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "PullDenseResponse.params: vector claims 50000000 items of at least 2 bytes, "
            "5 bytes left");
}

TEST(Codec, NamesTheFieldInsideAVectorItem) {
  std::string bytes = Raw(MessageTag::kReportTaskRequest, [](Writer& w) {
    w.I64(1);
    w.I64(2);
    w.Bool(true);
    w.String("");
    w.I64(3);
    w.F64(0.5);
    w.I64(4);
    w.I64(0);     // records_skipped
    w.Varint(2);  // metrics
    w.String("acc");
    w.Doubles({1, 2});
    w.String("auc");
    w.Varint(3);  // state: 3 doubles claimed, 1 present
    w.F64(1);
  });
  Result<ReportTaskRequest> decoded = Decode<ReportTaskRequest>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "ReportTaskRequest.metrics[1].state: vector claims 3 items of at least 8 bytes, "
            "8 bytes left");
}

TEST(Codec, RefusesABoolThatIsNeitherZeroNorOne) {
  Result<HeartbeatResponse> decoded = Decode<HeartbeatResponse>(std::string("\x05\x02\x02", 3));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "HeartbeatResponse.stop: bool must be 0 or 1, got 2");
}

TEST(Codec, RefusesAnUnknownTaskType) {
  std::string bytes = Encode(SampleTask());
  bytes[2 + 8] = 5;  // after the tag, the version and the 8-byte id
  Result<Task> decoded = Decode<Task>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "Task.type: unknown value 5 (at most 4)");
}

TEST(Codec, RefusesAnUnknownDataset) {
  std::string bytes = Encode(SampleTask());
  bytes[2 + 8 + 1] = 3;
  Result<Task> decoded = Decode<Task>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(), "Task.dataset: unknown value 3 (at most 2)");
}

TEST(Codec, EncodesALargeTensorAsItsBytesPlusAFewBytesOfFraming) {
  PullRowsResponse r{.values = PatternTensor({1000, 2500}, DType::kFloat32, 3)};
  const std::string bytes = Encode(r);
  // tag, version, dtype, rank, dims (2 varint bytes each), padding to
  // byte 64, data.
  EXPECT_EQ(bytes.size(), 2u + 1 + 1 + 2 + 2 + 56 + 10'000'000);
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ExpectSameTensor(decoded->values, r.values);
}

TEST(Codec, EncodesATensorViewAsOnlyItsOwnElements) {
  Tensor all = Tensor::FromVector({3, 2}, {1, 2, 3, 4, 5, 6});
  PullRowsResponse r{.values = all.Slice(1, 3)};
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(Encode(r));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->values.shape(), (tensor::Shape{2, 2}));
  EXPECT_EQ(decoded->values.ToVector(), (std::vector<float>{3, 4, 5, 6}));
}

TEST(Codec, NamesTheRingMemberFieldThatIsTruncated) {
  std::string bytes = Raw(MessageTag::kRingView, [](Writer& w) {
    w.U64(3);
    w.Varint(2);  // members
    w.I64(1);
    w.String("worker-0");
    w.String("10.0.0.1:7");
    w.I64(2);
    w.String("worker-1");
    w.Varint(40);  // address: 40 bytes claimed, 3 present
    w.Bytes("10.", 3);
  });
  Result<RingView> decoded = Decode<RingView>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "RingView.members[1].address: truncated: string needs 40 bytes, 3 left");
}

TEST(Codec, RefusesARingViewClaimingMoreMembersThanItsBytesHold) {
  std::string bytes = Raw(MessageTag::kRingView, [](Writer& w) {
    w.U64(3);
    w.Varint(5);  // members: 5 claimed, 10 bytes each at least
    w.Bytes("0123456789abcdefghij", 20);
  });
  Result<RingView> decoded = Decode<RingView>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "RingView.members: vector claims 5 items of at least 10 bytes, 20 bytes left");
}

TEST(Codec, RefusesARingViewWithoutItsSourceRank) {
  std::string bytes = Raw(MessageTag::kRingView, [](Writer& w) {
    w.U64(3);
    w.Varint(0);
    w.U8(0xFF);  // one of source_rank's four bytes
  });
  Result<RingView> decoded = Decode<RingView>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message().rfind("RingView.source_rank: ", 0), 0u)
      << decoded.status().message();
}

TEST(Codec, RefusesGarbageAsEveryRingMessage) {
  const std::string garbage("\x11\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 13);
  EXPECT_FALSE(Decode<JoinRingRequest>(garbage).ok());
  EXPECT_FALSE(Decode<RingViewRequest>(garbage).ok());
  EXPECT_FALSE(Decode<RingView>(garbage).ok());
  EXPECT_FALSE(Decode<RingSyncedRequest>(garbage).ok());
  EXPECT_FALSE(Decode<RingSyncedResponse>(garbage).ok());
  Result<RingView> view = Decode<RingView>(garbage);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.status().message().rfind("RingView.members: ", 0), 0u) << view.status().message();
}

TEST(Codec, DecodingAReceivedBlockLendsItsTensorsTheBlockWithoutACopy) {
  PushGradientsRequest r;
  r.dense.push_back({"a", PatternTensor({3}, DType::kFloat32, 1)});
  r.dense.push_back({"b", PatternTensor({100, 70}, DType::kFloat32, 2)});
  const net::Bytes block = net::Bytes::Copy(Encode(r));
  Result<PushGradientsRequest> decoded = Decode<PushGradientsRequest>(block);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  for (size_t i = 0; i < r.dense.size(); ++i) {
    const auto* data = static_cast<const char*>(decoded->dense[i].value.raw_data());
    EXPECT_GE(data, block.data());
    EXPECT_LT(data, block.data() + block.size());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % kTensorAlignment, 0u);
    ExpectSameTensor(decoded->dense[i].value, r.dense[i].value);
  }
}

TEST(Codec, ATensorViewOutlivesTheBlockHandleItCameFrom) {
  PullRowsResponse r{.values = PatternTensor({64, 64}, DType::kFloat32, 5)};
  tensor::Tensor values;
  {
    net::Bytes block = net::Bytes::Copy(Encode(r));
    Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(block);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    values = decoded->values;
  }
  ExpectSameTensor(values, r.values);
}

TEST(Codec, RefusesNonzeroPaddingBeforeATensorsElements) {
  std::string bytes = Encode(PullRowsResponse{.values = PatternTensor({4}, DType::kFloat32, 1)});
  // tag, version, dtype, rank, dim: 5 bytes, then padding up to byte 64.
  ASSERT_EQ(bytes.size(), 64u + 16);
  bytes[40] = 1;
  Result<PullRowsResponse> decoded = Decode<PullRowsResponse>(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().message(),
            "PullRowsResponse.values: nonzero padding byte before the tensor's elements");
}

TEST(Codec, APayloadSendsALargeTensorFromItsOwnStorage) {
  PullDenseResponse r;
  r.version = 3;
  r.params.push_back({"small", PatternTensor({10}, DType::kFloat32, 1)});
  r.params.push_back({"large", PatternTensor({1 << 14}, DType::kFloat32, 2)});
  const net::Payload payload = EncodePayload(r);
  EXPECT_EQ(payload.Flatten(), Encode(r));
  bool borrowed = false;
  for (const net::Payload::Piece& p : payload.Pieces()) {
    borrowed = borrowed || p.data == r.params[1].value.raw_data();
    EXPECT_NE(p.data, r.params[0].value.raw_data());
  }
  EXPECT_TRUE(borrowed) << "the large tensor was copied";
}

}  // namespace
}  // namespace edl::roles::protocol
