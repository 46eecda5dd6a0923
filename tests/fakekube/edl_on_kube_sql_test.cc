// A job on Kubernetes reading a PostgreSQL table with credentials from a
// Secret: the counting model (tests/testing/counting_job.h) trained from the
// table by pods of the fake cluster that get the password only through
// --database_secret (PGPASSWORD from the Secret's key, never in an argument,
// the ConfigMap, a pod's spec or a log), every row applied once per epoch;
// its --output, on no volume, fetched back from the master pod. And edl sql
// on Kubernetes: train, predict and evaluate as jobs of the fake cluster,
// the model stored in the database and loaded from there by the pods.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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
  // The export (on no volume) came back from the master's pod.
  EXPECT_NE(r.err.find("fetched --output " + data.File("out") + " from the master pod"),
            std::string::npos)
      << r.err;
  const std::map<float, int> rows = RowHistogram(data.File("out"), kRecords);
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
  // The pods took the password from the Secret, by reference.
  EXPECT_NE(pods.find(R"("secretKeyRef":{"key":"password","name":"db-cred","optional":true})"),
            std::string::npos)
      << pods;
  for (const std::string& where : {pods, r.out, r.err, cluster.Log()}) {
    EXPECT_EQ(where.find(secret_value), std::string::npos) << "the password leaked";
  }
  // Predictions into a directory of the user's, on no volume: the parts
  // come back and join what the directory holds.
  std::filesystem::create_directories(data.File("preds"));
  WriteText(data.File("preds/keep.txt"), "mine");
  std::vector<std::string> predict = {"predict"};
  for (auto& a :
       KubeJob(cluster, "sqlpredict",
               {"--model_def=" + data.File("counter.json"),
                "--checkpoint_dir_for_init=" + data.File("out"), "--prediction_data=" + table,
                "--database_secret=db-cred", "--distribution_strategy=ParameterServerStrategy",
                "--num_ps_pods=1", "--num_workers=1", "--minibatch_size=256",
                "--output=" + data.File("preds") + "/"})) {
    predict.push_back(a);
  }
  RunResult p = RunEdl(predict);
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err << cluster.Log();
  EXPECT_EQ(ReadText(data.File("preds/keep.txt")), "mine");
  EXPECT_TRUE(std::filesystem::exists(data.File("preds/_SUCCESS")));
  int64_t predicted = 0;
  for (const auto& e : std::filesystem::directory_iterator(data.File("preds"))) {
    if (e.path().filename().string().rfind("part-", 0) != 0) continue;
    const std::string text = ReadText(e.path().string());
    predicted += std::count(text.begin(), text.end(), '\n') - 1;  // less the header
  }
  EXPECT_EQ(predicted, kRecords);
}

TEST(EdlOnKubeSql, SqlStatementsTrainPredictAndEvaluateAsJobsOnKubernetes) {
  if (KubectlPath().empty()) EDL_SKIP_OR_FAIL_IN_CI(kNoKubectl);
  PostgresServer server;
  if (!server.ok()) EDL_SKIP_OR_FAIL_IN_CI(server.error());
  FakeCluster cluster("node-a:cpu=8,memory=64Gi");
  ASSERT_TRUE(cluster.ready()) << cluster.Log();
  TempDir dir;
  // Iris from scikit-learn's CSV, species as names, loaded by psql.
  const std::string csv = dir.File("iris_rows.csv");
  RunResult made = EdlProcess("/bin/sh", {"-c", "tail -n +2 " + std::string(EDL_SKLEARN_DATA) +
                                                    "/iris.csv | awk -F, "
                                                    "'BEGIN{split(\"setosa,versicolor,virginica\","
                                                    "s,\",\")} {printf \"%d,%s,%s,%s,%s,%s\\n\", "
                                                    "NR, $1, $2, $3, $4, s[$5+1]}' > " +
                                                    csv})
                       .Wait();
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_EQ(server.Psql("CREATE TABLE iris (id integer PRIMARY KEY, sepal_length real, "
                        "sepal_width real, petal_length real, petal_width real, species text);\n"
                        "\\copy iris FROM '" +
                        csv + "' CSV\n"),
            "");
  const std::string database = "postgresql://postgres@127.0.0.1:" + std::to_string(server.port()) +
                               "/postgres?passfile=" + server.passfile();
  std::vector<std::string> args = {
      "sql", "--database=" + database,
      "SELECT * FROM iris WHERE id % 5 <> 0\n"
      "TO TRAIN DNNClassifier\n"
      "WITH model.hidden_units = [16], model.learning_rate = 0.02, train.epoch = 40,\n"
      "     train.batch_size = 8\n"
      "COLUMN NUMERIC(sepal_length), NUMERIC(sepal_width), NUMERIC(petal_length),\n"
      "       NUMERIC(petal_width)\n"
      "LABEL species INTO iris_dnn;\n"
      "SELECT * FROM iris WHERE id % 5 = 0 TO PREDICT iris_pred.species USING iris_dnn;\n"
      "SELECT * FROM iris WHERE id % 5 = 0 TO EVALUATE iris_dnn\n"
      "WITH validation.metrics = \"Accuracy\" LABEL species INTO iris_eval;"};
  for (auto& a : KubeJob(cluster, "sqlflow",
                         {"--distribution_strategy=ParameterServerStrategy", "--num_ps_pods=1",
                          "--num_workers=1", "--seed=3"})) {
    args.push_back(a);
  }
  RunResult r = RunEdl(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << cluster.Log();
  // Three jobs, named apart; the model went into the database and the
  // predictions and metrics into tables.
  for (const char* job :
       {"job sqlflow submitted", "job sqlflow-2 submitted", "job sqlflow-3 submitted",
        "model iris_dnn saved in table edl_models", "30 predictions written to table iris_pred",
        "2 metrics written to table iris_eval"}) {
    EXPECT_NE(r.out.find(job), std::string::npos) << job << "\n" << r.out;
  }
  // The prediction and evaluation pods loaded the model from the database.
  const std::string logs = r.out + r.err + cluster.Log();
  EXPECT_NE(logs.find("loaded model iris_dnn from table edl_models"), std::string::npos) << logs;
  const double joined =
      std::stod(server.Psql("SELECT avg(CASE WHEN p.species = i.species THEN 1.0 ELSE 0 END) FROM "
                            "iris_pred p JOIN iris i ON p.id = i.id;"));
  const double reported =
      std::stod(server.Psql("SELECT value FROM iris_eval WHERE metric = 'accuracy';"));
  EXPECT_NEAR(joined, reported, 6e-5);
  EXPECT_GE(joined, 0.7);
}

}  // namespace
}  // namespace edl::testing
