// Whole-file reads and crash-safe whole-file replacement, for the role-history file.
//
// writeFileAtomically(path, bytes) never leaves `path` half written: it writes
// `path + ".tmp"` in the same directory (so the rename cannot cross file systems), fsyncs
// it, renames it over `path` and fsyncs the directory so the rename itself survives a
// crash. Until the rename, `path` keeps its old content; after a failure the temp file is
// removed. This is plain blocking I/O: call it off the allocation thread.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest {

Status writeFileAtomically(const std::string& path, std::string_view bytes);

// The whole file. A missing file is kNotFound; other failures are kIOError.
Result<std::string> readWholeFile(const std::string& path);

}  // namespace harvest
