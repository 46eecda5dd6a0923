// edl zoo list / show NAME / version.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cmd/commands.h"
#include "nn/keras/zoo.h"
#include "tensor/device_runtime.h"
#include "tensor/engine_info.h"
#include "tensor/gpu_info.h"

namespace edl::cmd {

Runner AddZooCommand(CLI::App& parent) {
  CLI::App* app =
      parent.add_subcommand("zoo", "The built-in model zoo (use as --model_def=zoo:NAME)");
  app->require_subcommand(1);
  CLI::App* list = app->add_subcommand("list", "List the built-in models");
  CLI::App* show = app->add_subcommand("show", "Print a built-in model's spec JSON");
  auto name = std::make_shared<std::string>();
  show->add_option("NAME", *name, "Model name (from `edl zoo list`)")->required();
  return [list, show, name]() {
    if (list->parsed()) {
      for (const std::string& n : nn::keras::ZooNames()) {
        std::printf("%-24s %s\n", n.c_str(), nn::keras::ZooDescription(n).c_str());
      }
      return 0;
    }
    if (show->parsed()) {
      auto spec = nn::keras::ZooSpecJson(*name);
      if (!spec.ok()) return Fail(spec.status().message());
      std::printf("%s\n", spec->c_str());
      return 0;
    }
    return 2;
  };
}

Runner AddVersionCommand(CLI::App& parent) {
  parent.add_subcommand("version", "Print the version, build and tensor engine");
  return []() {
    tensor::EngineInfo info = tensor::GetEngineInfo();
    std::printf("edl %s (%s)\n", EDL_VERSION, EDL_GIT);
    std::printf("build: %s, %s\n", EDL_BUILD_TYPE, EDL_ARCH);
    std::printf("oneDNN: %s, ISA in use: %s, threads: %d\n", info.onednn_version.c_str(),
                info.cpu_isa.c_str(), info.num_threads);
    const std::string plugin = tensor::DefaultCudaPluginPath();
    std::printf("CUDA: plugin %s (%s)\n", plugin.c_str(),
                access(plugin.c_str(), R_OK) == 0 ? "present" : "absent");
    std::printf("gpu: %s\n", tensor::DescribeGpus().Summary().c_str());
    return 0;
  };
}

}  // namespace edl::cmd
