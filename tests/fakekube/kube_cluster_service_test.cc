// The Services KubeCluster makes for parameter servers (Expose), against the
// fake API server: labelled as the pods behind them and as every other
// object of the job (docs/kubernetes.md), so that one selector such as
// app.kubernetes.io/component=ps finds both.
#include <gtest/gtest.h>

#include "kube/client.h"
#include "roles/cluster/kube_cluster.h"
#include "tests/fakekube/loopback_api_server.h"

namespace edl::fakekube {
namespace {

using roles::cluster::KubeCluster;
using roles::cluster::KubeClusterOptions;

TEST(KubeClusterService, APsServiceCarriesTheLabelsOfItsPods) {
  testing::LoopbackApiServer api;
  ASSERT_TRUE(api.Start().ok());
  auto client = api.NewKubeClient();
  ASSERT_TRUE(client.ok()) << client.status().message();
  KubeClusterOptions options;
  options.job_name = "j";
  options.image = "edl:dev";
  auto cluster = KubeCluster::Create(**client, options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  ASSERT_TRUE((*cluster)->Launch({"ps-1", {"ps"}, {}}).ok());
  ASSERT_TRUE((*cluster)->Expose("ps-1", 2222).ok());

  auto pods = api.store().List("pods", "default", "edl-process=ps-1", "");
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods.value->items.size(), 1u);
  auto service = api.store().Get("services", "default", "j-ps-1");
  ASSERT_TRUE(service.ok());
  const Json& labels = (*service.value)["metadata"]["labels"];
  EXPECT_EQ(labels, pods.value->items[0]["metadata"]["labels"]);
  EXPECT_EQ(labels["app.kubernetes.io/component"], "ps");
  EXPECT_EQ(labels["edl-role"], "ps");
  EXPECT_EQ(labels["edl-index"], "1");
  EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "edl-master");
}

}  // namespace
}  // namespace edl::fakekube
