// Encoding and decoding of the role-history file (protos/role_history.proto).
//
// decodeHistory() validates everything before returning anything: a file is either taken
// whole or refused with a reason, never loaded in part. The checks, in order:
//   empty -> unparsable/truncated -> bad magic -> newer or unknown format version ->
//   required fields missing (cut at a field boundary) -> body CRC-32 mismatch ->
//   body unparsable -> record count mismatch -> inconsistent content (duplicate role id or
//   name, empty names, duplicate agent, two records for one (agent, role), a record naming a
//   role id the map does not have).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "role_history/snapshot.h"

namespace harvest {

inline constexpr uint32_t kHistoryMagic = 0x31595248;  // "HRY1" on disk.
inline constexpr uint32_t kHistoryFormatVersion = 1;

// Records must be grouped by agent (RoleHistory::snapshot() sorts them by agent); if they
// are not, they are grouped here first.
std::string encodeHistory(const HistorySnapshot& snapshot);

Result<HistorySnapshot> decodeHistory(std::string_view bytes);

}  // namespace harvest
