#include "cmd/cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>

#include "cmd/commands.h"
#include "cmd/flag_errors.h"
#include "roles/local/checkpoint.h"
#include "sqlflow/stored_model.h"

namespace edl::cmd {

int Fail(const std::string& message) {
  std::fprintf(stderr, "edl: %s\n", message.c_str());
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "edl: elastic deep-learning trainer. One binary plays every role of a "
      "training job; models are Keras JSON, data is IDX, CSV, TFRecord or a database table.\n"
      "Quick start:\n"
      "  edl train --model_def=zoo:fashion_mnist_cnn \\\n"
      "    --training_data=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \\\n"
      "    --validation_data=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz \\\n"
      "    --num_epochs=3 --output=fm_model\n"
      "Run `edl COMMAND --help` for a command's flags.",
      "edl"};
  app.require_subcommand(1);
  // --checkpoint_dir_for_init may name a model edl sql stored in a database.
  roles::SetCheckpointFetcher(sqlflow::IsStoredModelUrl, sqlflow::FetchStoredModel);
  app.fallthrough(false);
  std::map<CLI::App*, Runner> runners;
  auto add = [&](Runner (*f)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    Runner r = f(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners[subs.back()] = std::move(r);
  };
  add(AddTrainCommand);
  add(AddEvaluateCommand);
  add(AddPredictCommand);
  add(AddZooCommand);
  add(AddDataCommand);
  add(AddSqlCommand);
  add(AddVersionCommand);
  add(AddMasterCommand);
  add(AddPsCommand);
  add(AddWorkerCommand);
  {
    Runner control = AddControlCommands(app);
    for (CLI::App* sub : app.get_subcommands({})) {
      const std::string& n = sub->get_name();
      if (n == "status" || n == "stop" || n == "scale" || n == "logs" || n == "list" ||
          n == "dashboard" || n == "wait") {
        runners[sub] = control;
      }
    }
  }
  // CLI11 reports a mistyped command only as "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::fprintf(stderr, "edl: unknown command \"%s\" (commands: %s)\n", argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "edl: %s\nRun `edl --help` or `edl COMMAND --help` for usage.\n",
                 FlagErrorSentence(e.what(), app).c_str());
    return 2;
  }
  for (auto& [sub, runner] : runners) {
    if (!sub->parsed()) continue;
    // Library code reports failures as Status; an exception escaping it is
    // still turned into one line and a failed exit, never a crash.
    try {
      return runner();
    } catch (const std::exception& e) {
      return Fail(std::string("unexpected error: ") + e.what());
    }
  }
  return 2;
}

}  // namespace edl::cmd
