// Small file helpers that report failures as Status with the path named.
#pragma once

#include <string>

#include "base/status.h"

namespace edl {

Result<std::string> ReadFile(const std::string& path);
// Writes `contents` to path via a temporary file in the same directory, then
// renames it over path, so readers never see a half-written file.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

// Whether `path` is relative and stays below the directory it is relative
// to: no '.' or '..' part ("" is the directory itself). For file names that
// come from elsewhere (a database, a peer) before they are written.
bool IsPathBelow(const std::string& path);
bool IsTerminal(int fd);

}  // namespace edl
