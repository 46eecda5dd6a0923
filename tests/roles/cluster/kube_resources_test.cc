#include "roles/cluster/kube_resources.h"

#include <gtest/gtest.h>

namespace edl::roles::cluster {
namespace {

TEST(ParseResources, ReadsElasticDlSyntaxAndMapsGpuToNvidia) {
  auto r = ParseResources("--worker_resource_request", "cpu=1,memory=4096Mi,gpu=2");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["cpu"], "1");
  EXPECT_EQ((*r)["memory"], "4096Mi");
  EXPECT_EQ((*r)["nvidia.com/gpu"], "2");
  EXPECT_EQ(r->count("gpu"), 0u);
}

TEST(ParseResources, AcceptsMillicoresVendorResourcesAndAnEmptyString) {
  auto r = ParseResources("--ps_resource_request", " cpu=500m , amd.com/gpu=1, disk=10Gi");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["cpu"], "500m");
  EXPECT_EQ((*r)["amd.com/gpu"], "1");
  EXPECT_EQ((*r)["ephemeral-storage"], "10Gi");
  auto empty = ParseResources("--ps_resource_limit", "");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ParseResources, RefusesMalformedPartsNamingTheFlag) {
  for (const char* bad : {"cpu", "cpu=", "=1", "cpu=one", "memory=4096MB", "gpu=0.5", "colour=red",
                          "cpu=1,cpu=2", "memory=-1Gi", "cpu=1m5"}) {
    auto r = ParseResources("--worker_resource_request", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--worker_resource_request"), std::string::npos)
        << r.status().message();
  }
}

TEST(ParseVolumes, ReadsClaimsAndHostPathsSeparatedBySemicolons) {
  auto v = ParseVolumes("--volume",
                        "claim_name=data,mount_path=/data,sub_path=mnist;"
                        "host_path=/srv/ckpt,mount_path=/ckpt,type=Directory");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].claim_name, "data");
  EXPECT_EQ((*v)[0].mount_path, "/data");
  EXPECT_EQ((*v)[0].sub_path, "mnist");
  EXPECT_EQ((*v)[1].host_path, "/srv/ckpt");
  EXPECT_EQ((*v)[1].host_path_type, "Directory");
  EXPECT_NE((*v)[0].name, (*v)[1].name);
}

TEST(ParseVolumes, RefusesVolumesThatCannotBeMounted) {
  for (const char* bad : {"mount_path=/data", "claim_name=c", "claim_name=c,mount_path=data",
                          "claim_name=c,host_path=/h,mount_path=/d", "claim_name=C_D,mount_path=/d",
                          "host_path=relative,mount_path=/d", "claim_name=c,mount_path=/d,size=1",
                          "claim_name=a,mount_path=/d;claim_name=b,mount_path=/d", "claim_name"}) {
    auto v = ParseVolumes("--volume", bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("--volume"), std::string::npos) << v.status().message();
  }
}

TEST(WorkerPriorities, AFractionGivesHighToBothEndsFirst) {
  auto p = WorkerPriorities("--worker_pod_priority", "0.5", 5);
  ASSERT_TRUE(p.ok()) << p.status().message();
  // ceil(5 * 0.5) = 3 high: indices 0, 4, 1.
  EXPECT_EQ(*p, (std::vector<std::string>{"high", "high", "low", "low", "high"}));
}

TEST(WorkerPriorities, ZeroOneAndClassNames) {
  EXPECT_EQ(*WorkerPriorities("f", "0", 3), (std::vector<std::string>{"low", "low", "low"}));
  EXPECT_EQ(*WorkerPriorities("f", "1", 2), (std::vector<std::string>{"high", "high"}));
  EXPECT_EQ(*WorkerPriorities("f", "edl-low", 2), (std::vector<std::string>{"edl-low", "edl-low"}));
  EXPECT_EQ(*WorkerPriorities("f", "", 2), (std::vector<std::string>{"", ""}));
}

TEST(WorkerPriorities, RefusesFractionsOutsideTheUnitIntervalAndBadNames) {
  for (const char* bad : {"1.5", "0.5x", "High_Class", "-0.5"}) {
    auto p = WorkerPriorities("--worker_pod_priority", bad, 4);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("--worker_pod_priority"), std::string::npos);
  }
}

TEST(ParseEnvs, ValuesMayHoldCommas) {
  auto e = ParseEnvs("--envs", "A=1,LIST=x,y,z,B=2");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->size(), 3u);
  EXPECT_EQ((*e)[1], (std::pair<std::string, std::string>{"LIST", "x,y,z"}));
  EXPECT_EQ((*e)[2], (std::pair<std::string, std::string>{"B", "2"}));
  EXPECT_FALSE(ParseEnvs("--envs", "novalue").ok());
  EXPECT_FALSE(ParseEnvs("--envs", "BAD NAME=1").ok());
}

TEST(CheckDnsLabel, AcceptsKubernetesNamesAndExplainsRefusals) {
  EXPECT_TRUE(CheckDnsLabel("--job_name", "mnist-2").ok());
  for (const char* bad : {"", "Mnist", "mnist_2", "-mnist", "mnist-", "a.b"}) {
    Status s = CheckDnsLabel("--job_name", bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("--job_name"), std::string::npos);
  }
  EXPECT_FALSE(CheckDnsLabel("--job_name", std::string(41, 'a'), 40).ok());
}

}  // namespace
}  // namespace edl::roles::cluster
