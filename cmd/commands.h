// The subcommands of edl. Each Add*Command registers its flags on `parent`
// and returns a function that runs the command after parsing and returns
// the process exit code.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace CLI {
class App;
}

namespace edl::cmd {

using Runner = std::function<int()>;

Runner AddTrainCommand(CLI::App& parent);
Runner AddEvaluateCommand(CLI::App& parent);
Runner AddPredictCommand(CLI::App& parent);
Runner AddZooCommand(CLI::App& parent);
Runner AddDataCommand(CLI::App& parent);
Runner AddSqlCommand(CLI::App& parent);
Runner AddVersionCommand(CLI::App& parent);
Runner AddMasterCommand(CLI::App& parent);
Runner AddPsCommand(CLI::App& parent);
Runner AddWorkerCommand(CLI::App& parent);
// status, stop, scale, logs, list, dashboard and wait share one runner.
Runner AddControlCommands(CLI::App& parent);
// `edl status --format=text`: one line per field of the status JSON
// (`state: running`, `tasks.training.done: 3`, `workers[0]: name=worker-0 …`).
std::string StatusText(const nlohmann::json& status);
// $XDG_RUNTIME_DIR/edl, else /tmp/edl-<uid>.
std::string JobsRootFlagDefault();
// The path of this edl binary (/proc/self/exe); "" if it cannot be read.
std::string SelfBinary();
// What to say when SelfBinary() is "".
inline constexpr const char* kNoSelfBinary =
    "cannot find the edl binary: /proc/self/exe is not readable (is /proc mounted?)";

// Prints "edl: <message>" on stderr and returns the exit code for a failed
// command (1).
int Fail(const std::string& message);

}  // namespace edl::cmd
