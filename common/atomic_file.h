// Whole-file reads and crash-safe whole-file replacement, for the role-history file.
//
// writeFileAtomically(path, bytes) never leaves `path` half written: it writes
// `path + ".tmp"` in the same directory (so the rename cannot cross file systems), fsyncs
// it, renames it over `path` and fsyncs the directory so the rename itself survives a
// crash. Until the rename, `path` keeps its old content; after a failure the temp file is
// removed. This is plain blocking I/O: call it off the allocation thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest {

// Test hooks that make a write fail part way, to show what a failure leaves behind.
struct WriteFaults {
  // Write only this many bytes of the temp file, then fail as a full disk would.
  std::optional<size_t> failAfterBytes;
  // Fail after the temp file is complete and synced, just before the rename.
  bool failBeforeRename = false;
};

Status writeFileAtomically(const std::string& path, std::string_view bytes,
                           const WriteFaults* faults = nullptr);

// The whole file. A missing file is an error whose message is exactly "missing".
Result<std::string> readWholeFile(const std::string& path);

}  // namespace harvest
