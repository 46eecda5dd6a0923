// The master's state kept in a ConfigMap (roles/job/state_configmap.h),
// against the fake API server over HTTPS: a new job's ConfigMap is created
// empty, a save mirrors the directory exactly (files gone are dropped), a
// new master restores it, a master that lost the ConfigMap to another is
// refused (fencing), and a state too large for a ConfigMap is refused with
// its size.
#include "roles/job/state_configmap.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/file.h"
#include "kube/base64.h"
#include "kube/client.h"
#include "kube/config.h"
#include "tests/fakekube/loopback_api_server.h"
#include "tests/testing/run_edl.h"

namespace edl::fakekube {
namespace {

namespace fs = std::filesystem;
using roles::job::StateConfigMap;

class StateConfigMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    auto client = api_.NewKubeClient();
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    // The master's Job, owner of the ConfigMap (a dangling owner would have
    // the garbage collector delete it).
    auto job =
        api_.store().Create("jobs", "default",
                            {{"metadata", {{"name", "j-master"}}},
                             {"spec",
                              {{"template",
                                {{"spec",
                                  {{"restartPolicy", "Never"},
                                   {"containers", {{{"name", "main"}, {"image", "edl"}}}}}}}}}}});
    ASSERT_TRUE(job.ok()) << job.error.message;
    job_uid_ = (*job.value)["metadata"]["uid"];
  }
  std::unique_ptr<StateConfigMap> Mirror() {
    const Json owner = {{{"apiVersion", "batch/v1"},
                         {"kind", "Job"},
                         {"name", "j-master"},
                         {"uid", job_uid_},
                         {"controller", false}}};
    return std::make_unique<StateConfigMap>(*client_, "default", "j-master-state", owner);
  }
  Json Stored() { return *api_.store().Get("configmaps", "default", "j-master-state").value; }

  testing::LoopbackApiServer api_;
  std::unique_ptr<kube::Client> client_;
  std::string job_uid_;
  edl::testing::TempDir dir_;
};

TEST_F(StateConfigMapTest, SavesExactlyTheDirectoryAndANewMasterRestoresIt) {
  auto first = Mirror();
  const std::string a = dir_.File("a");
  auto fresh = first->Restore(a);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_FALSE(*fresh);  // a new job
  EXPECT_EQ(Stored()["metadata"]["ownerReferences"][0]["kind"], "Job") << Stored().dump();
  ASSERT_TRUE(WriteFileAtomically(a + "/snapshot", std::string("\0\1state", 7)).ok());
  ASSERT_TRUE(WriteFileAtomically(a + "/journal-0", "records").ok());
  Status saved = first->Save(a);
  ASSERT_TRUE(saved.ok()) << saved.message() << Stored().dump();
  EXPECT_EQ(Stored()["binaryData"].size(), 2u);
  // A snapshot replaced journal-0 with journal-7: the old key goes.
  fs::remove(a + "/journal-0");
  ASSERT_TRUE(WriteFileAtomically(a + "/journal-7", "more").ok());
  ASSERT_TRUE(first->Save(a).ok());
  const Json data = Stored()["binaryData"];
  EXPECT_FALSE(data.contains("journal-0")) << data.dump();
  EXPECT_EQ(*kube::Base64Decode(data["journal-7"].get<std::string>()), "more");

  auto second = Mirror();
  const std::string b = dir_.File("b");
  auto restored = second->Restore(b);
  ASSERT_TRUE(restored.ok()) << restored.status().message();
  EXPECT_TRUE(*restored);
  EXPECT_EQ(*ReadFile(b + "/snapshot"), std::string("\0\1state", 7));
  EXPECT_EQ(*ReadFile(b + "/journal-7"), "more");
  EXPECT_FALSE(fs::exists(b + "/journal-0"));
}

TEST_F(StateConfigMapTest, AMasterThatLostTheStateToAnotherIsRefused) {
  auto old_master = Mirror();
  auto new_master = Mirror();
  ASSERT_TRUE(old_master->Restore(dir_.File("old")).ok());
  ASSERT_TRUE(new_master->Restore(dir_.File("new")).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_.File("new") + "/journal-0", "new").ok());
  ASSERT_TRUE(new_master->Save(dir_.File("new")).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_.File("old") + "/journal-0", "old").ok());
  Status s = old_master->Save(dir_.File("old"));
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.message();
  EXPECT_NE(s.message().find("written by another master"), std::string::npos) << s.message();
  EXPECT_EQ(*kube::Base64Decode(Stored()["binaryData"]["journal-0"].get<std::string>()), "new");
}

TEST_F(StateConfigMapTest, AStateTooLargeForAConfigMapIsRefusedWithItsSize) {
  auto m = Mirror();
  const std::string d = dir_.File("big");
  ASSERT_TRUE(m->Restore(d).ok());
  ASSERT_TRUE(WriteFileAtomically(d + "/snapshot", std::string(700 * 1024, 'x')).ok());
  Status s = m->Save(d);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("no longer fits ConfigMap j-master-state"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("--checkpoint_dir on a --volume"), std::string::npos);
}

}  // namespace
}  // namespace edl::fakekube
