// Training with --device=cuda on the host-memory fake device
// (tests/testing/host_memory_device_runtime.h): parameters and activations
// are tagged Device::kCUDA, so any host tensor mixed into device work
// CHECK-fails, and the trained weights must match a CPU run of the same job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/clock.h"
#include "roles/local/checkpoint.h"
#include "roles/local/compiled_model.h"
#include "roles/local/local_trainer.h"
#include "tensor/device_runtime.h"
#include "tests/testing/host_memory_device_runtime.h"

namespace edl::roles {
namespace {

namespace fs = std::filesystem;
using tensor::Device;

const std::string kImages = std::string(EDL_FASHION_MNIST) + "/t10k-images-idx3-ubyte.gz";

class DeviceTraining : public ::testing::Test {
 protected:
  DeviceTraining() {
    root_ = fs::temp_directory_path() /
            ("edl-device-training-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  ~DeviceTraining() override { fs::remove_all(root_); }

  // Trains `model` for `steps` steps of `batch` records on `device`; returns
  // its final checkpoint (weights and optimizer slots).
  Checkpoint Train(const std::string& model, const std::string& device, int64_t batch,
                   int64_t steps) {
    TrainOptions o;
    o.model.model_def = model;
    o.model.seed = 11;
    o.model.num_threads = 1;
    o.model.device = device;
    o.training_data = kImages;
    o.minibatch_size = batch;
    o.max_steps = steps;
    o.checkpoint_dir = (root_ / device).string();
    o.progress_bar = false;
    std::FILE* out = std::fopen("/dev/null", "w");
    auto summary = RunLocalTraining(o, out, false, SystemClock());
    std::fclose(out);
    EXPECT_TRUE(summary.ok()) << summary.status().message();
    if (summary.ok()) {
      EXPECT_EQ(summary->steps, steps);
    }
    auto c = ReadCheckpoint(o.checkpoint_dir);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : Checkpoint{};
  }

  // Weights and slots of a device run and a CPU run agree to 1e-5
  // (relative). They differ only by rounding: on the device the loss is
  // composed from float ops, on the CPU it is a fused double loop.
  void ExpectSameWeights(const std::string& model, int64_t batch, int64_t steps) {
    const float tolerance = 1e-5f;
    const Checkpoint cpu = Train(model, "cpu", batch, steps);
    const int64_t uploads_before = fake_.uploads();
    const Checkpoint dev = Train(model, "cuda", batch, steps);
    EXPECT_GT(fake_.uploads(), uploads_before) << "nothing went to the device";
    ASSERT_EQ(cpu.model.size(), dev.model.size());
    ASSERT_FALSE(cpu.model.empty());
    EXPECT_EQ(dev.version, cpu.version);
    float worst = 0;
    auto compare = [&](const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].name, b[i].name);
        ASSERT_EQ(a[i].value.device(), Device::kCPU) << a[i].name;
        ASSERT_EQ(b[i].value.device(), Device::kCPU) << b[i].name;
        const auto x = a[i].value.ToVector(), y = b[i].value.ToVector();
        ASSERT_EQ(x.size(), y.size()) << a[i].name;
        for (size_t j = 0; j < x.size(); ++j) {
          const float d = std::abs(x[j] - y[j]) / (1.f + std::abs(x[j]));
          worst = std::max(worst, d);
          ASSERT_LE(d, tolerance) << a[i].name << "[" << j << "]: " << x[j] << " vs " << y[j];
        }
      }
    };
    compare(cpu.model, dev.model);
    compare(cpu.optimizer, dev.optimizer);
    RecordProperty("worst_relative_difference", std::to_string(worst));
  }

  ::edl::testing::HostMemoryDeviceRuntime fake_;
  tensor::ScopedDeviceRuntime scope_{Device::kCUDA, &fake_};
  fs::path root_;
};

TEST_F(DeviceTraining, TheMlpTrainsOnTheDeviceToTheWeightsOfTheCpuRun) {
  ExpectSameWeights("zoo:fashion_mnist_mlp", 64, 6);
}

// Two steps only: with max pooling and ReLU a rounding difference in the loss
// can flip which tap wins a window, after which the runs drift apart like
// any two float implementations (3 steps of 64 already differ by 7e-5).
// With a temporary switch composing the loss the same way on both sides, 6
// steps of 64 with SGD agreed to 1e-5 (checked by hand): the drift is the
// loss's rounding, not the device plumbing.
TEST_F(DeviceTraining, TheCnnWithBatchNormAndDropoutTrainsOnTheDeviceToTheWeightsOfTheCpuRun) {
  ExpectSameWeights("zoo:fashion_mnist_cnn", 128, 2);
}

TEST_F(DeviceTraining, CompileModelPutsEveryParameterOnTheDeviceAndCheckpointsOnTheHost) {
  ModelOptions mo;
  mo.model_def = "zoo:fashion_mnist_cnn";
  mo.device = "cuda";
  auto cm = CompileModel(mo);
  ASSERT_TRUE(cm.ok()) << cm.status().message();
  EXPECT_EQ(cm->device, Device::kCUDA);
  EXPECT_EQ(cm->model->device(), Device::kCUDA);
  for (const nn::Parameter* p : cm->model->parameters()) {
    EXPECT_EQ(p->value.device(), Device::kCUDA) << p->name;
  }
  const Checkpoint c = cm->MakeCheckpoint();
  for (const NamedTensor& t : c.model) EXPECT_EQ(t.value.device(), Device::kCPU) << t.name;
}

TEST_F(DeviceTraining, AnUnknownDeviceIsRefusedNamingTheFlag) {
  ModelOptions mo;
  mo.model_def = "zoo:fashion_mnist_mlp";
  mo.device = "tpu";
  auto cm = CompileModel(mo);
  ASSERT_FALSE(cm.ok());
  EXPECT_NE(cm.status().message().find("--device"), std::string::npos) << cm.status().message();
}

}  // namespace
}  // namespace edl::roles
