// Flag errors as sentences: CLI11's parse errors ("Value abc not in range
// 0.000000 to 1797693134862315708…", "Could not convert: --x = 1.5", "The
// following arguments were not expected: --y") rewritten to say which flag,
// what was given and what it takes. Messages it does not recognize pass
// through unchanged.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace edl::cmd {

// `message` is a CLI11 ParseError's what(); `app` the parsed application,
// whose options say what type a flag takes.
std::string FlagErrorSentence(const std::string& message, const CLI::App& app);

}  // namespace edl::cmd
