// A job on Kubernetes reading a PostgreSQL table with credentials from a
// Secret: the counting model (tests/testing/counting_job.h) trained from the
// table by pods of the fake cluster that get the password only through
// --database_secret (PGPASSWORD from the Secret's key, never in an argument,
// the ConfigMap, a pod's spec or a log), every row applied once per epoch.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/fakekube/fake_cluster.h"
#include "tests/fakekube/kubectl_path.h"
#include "tests/testing/counting_job.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

TEST(EdlOnKubeSql, TrainsFromAPostgresTableWithThePasswordFromASecretOnly) {
  constexpr int kEpochs = 2;
  constexpr int kRecords = 8192;
  if (KubectlPath().empty()) EDL_SKIP_OR_FAIL_IN_CI(kNoKubectl);
  PostgresServer server;
  if (!server.ok()) EDL_SKIP_OR_FAIL_IN_CI(server.error());
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir data;
  WriteCountingJob(data, kRecords);
  ASSERT_EQ(server.Psql("CREATE TABLE train (rid bigint PRIMARY KEY, label double precision);\n"
                        "\\copy train FROM '" +
                        data.File("train.csv") + "' CSV HEADER\n"),
            "");
  const std::string password =
      ReadText(server.passfile()).substr(std::string("*:*:*:postgres:").size());
  const std::string secret_value = password.substr(0, password.find('\n'));
  // (kubectl create -f: `kubectl create secret` sends protobuf, which the
  // fake API server does not speak.)
  WriteText(data.File("secret.json"), Json({{"apiVersion", "v1"},
                                            {"kind", "Secret"},
                                            {"metadata", {{"name", "db-cred"}}},
                                            {"stringData", {{"password", secret_value}}}})
                                          .dump());
  RunResult created = EdlProcess(KubectlPath(), {"--kubeconfig=" + cluster.admin_kubeconfig(),
                                                 "create", "-f", data.File("secret.json")})
                          .Wait();
  ASSERT_EQ(created.exit_code, 0) << created.err;
  // No passfile: the pods have only the Secret.
  const std::string table =
      "postgresql://postgres@127.0.0.1:" + std::to_string(server.port()) + "/postgres?table=train";
  std::vector<std::string> args = {"train"};
  for (auto& a : KubeJob(cluster, "sqljob",
                         {"--model_def=" + data.File("counter.json"), "--training_data=" + table,
                          "--database_secret=db-cred", "--num_epochs=" + std::to_string(kEpochs),
                          "--num_ps_pods=1", "--num_workers=2", "--minibatch_size=32",
                          "--num_minibatches_per_task=8", "--output=" + data.File("out")})) {
    args.push_back(a);
  }
  EdlProcess client(args);
  std::string pods;
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto workers = cluster.Pods("edl-job=sqljob,edl-role=worker");
        if (workers.empty()) return false;
        pods = Json(cluster.Pods("edl-job=sqljob")).dump();
        return true;
      },
      120))
      << client.Out() << cluster.Log();
  RunResult r = client.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  const std::map<float, int> rows = RowHistogram(data.File("out"), kRecords);
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
  // The pods took the password from the Secret, by reference.
  EXPECT_NE(pods.find(R"("secretKeyRef":{"key":"password","name":"db-cred","optional":true})"),
            std::string::npos)
      << pods;
  for (const std::string& where : {pods, r.out, r.err, cluster.Log()}) {
    EXPECT_EQ(where.find(secret_value), std::string::npos) << "the password leaked";
  }
}

}  // namespace
}  // namespace edl::testing
