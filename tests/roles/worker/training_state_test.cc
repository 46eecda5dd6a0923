// The training state a re-formed ring broadcasts (roles/worker/training_state.h).
#include "roles/worker/training_state.h"

#include <gtest/gtest.h>

#include <cstring>

#include "nn/autograd.h"

namespace edl::roles::worker {
namespace {

CompiledModel Mlp(uint64_t seed) {
  ModelOptions o;
  o.model_def = "zoo:fashion_mnist_mlp";
  o.seed = seed;
  auto cm = CompileModel(o);
  EDL_CHECK(cm.ok()) << cm.status().message();
  return std::move(cm).value();
}

// One Adam step with a constant gradient, so the optimizer has slots.
void TakeAStep(CompiledModel& cm, float g) {
  auto params = cm.model->parameters();
  for (nn::Parameter* p : params) p->grad = tensor::Tensor::Full(p->value.shape(), g);
  cm.optimizer->Apply(params);
  for (nn::Parameter* p : params) p->ZeroGrad();
}

bool SameWeights(CompiledModel& a, CompiledModel& b) {
  auto pa = a.model->parameters(), pb = b.model->parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i) {
    if (std::memcmp(pa[i]->value.f32(), pb[i]->value.f32(), pa[i]->value.bytes()) != 0) {
      return false;
    }
  }
  return true;
}

TEST(TrainingState, CarriesWeightsSlotsAndStepsToAFreshModelBitForBit) {
  CompiledModel trained = Mlp(1);
  TakeAStep(trained, 0.5f);
  TakeAStep(trained, -0.25f);
  trained.epoch = 3;
  CompiledModel fresh = Mlp(2);
  ASSERT_FALSE(SameWeights(trained, fresh));

  ASSERT_TRUE(DecodeTrainingState(EncodeTrainingState(trained), fresh).ok());
  EXPECT_TRUE(SameWeights(trained, fresh));
  EXPECT_EQ(fresh.optimizer->iterations(), 2);
  EXPECT_EQ(fresh.epoch, 3);
  // The same next step from the same state gives the same weights: the
  // slots (Adam's m and v) came along.
  TakeAStep(trained, 0.125f);
  TakeAStep(fresh, 0.125f);
  EXPECT_TRUE(SameWeights(trained, fresh));
}

TEST(TrainingState, RefusesTruncatedBytesAtEveryLengthAndChangesNothing) {
  CompiledModel source = Mlp(1);
  TakeAStep(source, 1.f);
  const std::string bytes = EncodeTrainingState(source);
  CompiledModel target = Mlp(2);
  const std::string before = EncodeTrainingState(target);
  for (size_t len :
       {size_t{0}, size_t{3}, size_t{10}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    Status s = DecodeTrainingState(std::string_view(bytes).substr(0, len), target);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << len;
    EXPECT_NE(s.message().find("training state"), std::string::npos) << s.message();
  }
  EXPECT_EQ(EncodeTrainingState(target), before);
}

TEST(TrainingState, NamesWhatIsWrongWithMalformedState) {
  CompiledModel source = Mlp(1);
  TakeAStep(source, 1.f);
  const std::string good = EncodeTrainingState(source);
  CompiledModel target = Mlp(2);
  const std::string before = EncodeTrainingState(target);

  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_NE(DecodeTrainingState(bad_magic, target).message().find("bad magic"), std::string::npos);
  EXPECT_NE(DecodeTrainingState(good + "x", target).message().find("trailing"), std::string::npos);
  std::string bad_format = good;
  bad_format[4] = 9;
  EXPECT_NE(DecodeTrainingState(bad_format, target).message().find("format 9"), std::string::npos);

  // A weight another model has: the first tensor's name is "hidden/kernel"
  // (after magic, format, step, epoch, count, group and name length).
  const size_t name_at = 4 + 4 + 8 + 8 + 4 + 1 + 4;
  ASSERT_EQ(good.substr(name_at, 6), "hidden");
  std::string renamed = good;
  renamed.replace(name_at, 6, "hodden");
  EXPECT_NE(DecodeTrainingState(renamed, target).message().find("\"hodden/kernel\" is not in"),
            std::string::npos);
  // A weight of another shape: its first dimension (784) changed.
  const size_t kernel_name_len = std::string("hidden/kernel").size();
  const size_t dims_at = name_at + kernel_name_len + 4;
  int64_t dim0 = 0;
  std::memcpy(&dim0, good.data() + dims_at, 8);
  ASSERT_EQ(dim0, 784);
  std::string reshaped = good;
  const int64_t other = 392;
  std::memcpy(reshaped.data() + dims_at, &other, 8);
  Status s = DecodeTrainingState(reshaped, target);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeTrainingState(target), before) << "a refused state changed the model";
}

TEST(TrainingState, RefusesAStateWithoutOneOfTheModelsWeights) {
  CompiledModel one = Mlp(1);
  // Built by hand: magic, format 1, step 0, epoch 0, no tensors.
  std::string empty("EDLS", 4);
  const uint32_t format = 1, count = 0;
  const int64_t zero = 0;
  empty.append(reinterpret_cast<const char*>(&format), 4);
  empty.append(reinterpret_cast<const char*>(&zero), 8);
  empty.append(reinterpret_cast<const char*>(&zero), 8);
  empty.append(reinterpret_cast<const char*>(&count), 4);
  Status s = DecodeTrainingState(empty, one);
  EXPECT_NE(s.message().find("is missing"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace edl::roles::worker
