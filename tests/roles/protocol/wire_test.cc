#include "roles/protocol/wire.h"

#include <gtest/gtest.h>

#include <limits>

namespace edl::roles::protocol {
namespace {

std::string Written(void (*f)(Writer&)) {
  Writer w;
  f(w);
  return std::move(w).Take();
}

TEST(Wire, VarintsRoundTripAtEveryLengthBoundary) {
  std::vector<uint64_t> values = {0,   1,     127,   128,
                                  255, 16383, 16384, std::numeric_limits<uint64_t>::max()};
  for (int shift = 7; shift < 64; shift += 7) {
    values.push_back((uint64_t{1} << shift) - 1);
    values.push_back(uint64_t{1} << shift);
  }
  for (uint64_t v : values) {
    SizeCounter counter;
    counter.Varint(v);
    Writer w;
    w.Varint(v);
    const std::string bytes = std::move(w).Take();
    EXPECT_EQ(bytes.size(), counter.size()) << v;
    Reader r(bytes, "M");
    EXPECT_EQ(r.Varint("v"), v);
    EXPECT_TRUE(r.Finish().ok()) << r.Finish().message();
  }
}

TEST(Wire, RefusesANonCanonicalVarint) {
  const std::string bytes("\x81\x00", 2);
  Reader r(bytes, "M");
  r.Varint("count");
  EXPECT_EQ(r.Finish().message(), "M.count: non-canonical varint (redundant trailing zero byte)");
}

TEST(Wire, RefusesAVarintBeyond64Bits) {
  const std::string bytes = std::string(9, '\xff') + "\x02";
  Reader r(bytes, "M");
  r.Varint("count");
  EXPECT_EQ(r.Finish().message(), "M.count: varint overflows 64 bits");
}

TEST(Wire, FixedWidthValuesAreLittleEndian) {
  const std::string bytes = Written([](Writer& w) {
    w.I32(0x01020304);
    w.I64(-2);
  });
  EXPECT_EQ(bytes, std::string("\x04\x03\x02\x01\xfe\xff\xff\xff\xff\xff\xff\xff", 12));
}

TEST(Wire, TheFirstFailureIsKeptAndLaterReadsReturnZeros) {
  const std::string bytes = Written([](Writer& w) {
    w.I32(7);
    w.U8(9);
  });
  Reader r(bytes, "M");
  EXPECT_EQ(r.I32("a"), 7);
  EXPECT_EQ(r.I64("b"), 0);  // 1 byte left
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.U8("c"), 0);
  EXPECT_EQ(r.String("d"), "");
  EXPECT_FALSE(r.Tensor("e").defined());
  const Status s = r.Finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "M.b: truncated: value needs 8 bytes, 1 left");
}

TEST(Wire, ErrorPathsNameNestedFieldsAndItems) {
  Reader r("", "Msg");
  {
    auto outer = r.Field("outer");
    auto item = r.Item("items", 4);
    r.Bool("flag");
  }
  EXPECT_EQ(r.Finish().message(), "Msg.outer.items[4].flag: truncated: bool needs 1 bytes, 0 left");
}

TEST(Wire, SizeCounterAgreesWithWriterForEveryKindOfValue) {
  auto write = [](auto& w) {
    w.U8(1);
    w.Bool(true);
    w.I32(-1);
    w.I64(5);
    w.U64(6);
    w.F64(0.25);
    w.Varint(300);
    w.String("hello");
    w.Doubles({1.0, 2.0, 3.0});
    w.Tensor(tensor::Tensor());
    w.Tensor(tensor::Tensor::Zeros({3, 200}));
    w.Tensor(tensor::Tensor::Zeros({0, 5}, tensor::DType::kInt64));
  };
  SizeCounter counter;
  write(counter);
  Writer w;
  write(w);
  EXPECT_EQ(std::move(w).Take().size(), counter.size());
}

TEST(Wire, AnUndefinedTensorIsOneMarkerByte) {
  const std::string bytes = Written([](Writer& w) { w.Tensor(tensor::Tensor()); });
  EXPECT_EQ(bytes, std::string(1, static_cast<char>(kUndefinedTensor)));
  Reader r(bytes, "M");
  EXPECT_FALSE(r.Tensor("t").defined());
  EXPECT_TRUE(r.Finish().ok());
}

TEST(Wire, AnEmptyTensorStaysDefinedWithItsShape) {
  const std::string bytes = Written([](Writer& w) {
    w.Tensor(tensor::Tensor::Zeros({0, 7}, tensor::DType::kUInt8));
  });
  Reader r(bytes, "M");
  tensor::Tensor t = r.Tensor("t");
  ASSERT_TRUE(r.Finish().ok());
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), tensor::DType::kUInt8);
  EXPECT_EQ(t.shape(), (tensor::Shape{0, 7}));
}

}  // namespace
}  // namespace edl::roles::protocol
