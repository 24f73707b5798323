// Resource kind names ("cpus", "mem", "ports", ...) interned to small dense ids.
//
// Hot paths index arrays by KindId instead of hashing strings. The table is process-wide and
// only grows; interning takes a lock (it happens when parsing input, never per allocation).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace harvest {

using KindId = uint16_t;

namespace kinds {
// Pre-interned ids for the names every cluster has, so code and tests can use constants.
inline constexpr KindId kCpus = 0;
inline constexpr KindId kMem = 1;
inline constexpr KindId kDisk = 2;
inline constexpr KindId kPorts = 3;
inline constexpr KindId kGpus = 4;
inline constexpr size_t kMaxKinds = 4096;

// Returns the id of `name`, adding it if new. Fails (returns false) only when kMaxKinds
// distinct names already exist.
bool intern(std::string_view name, KindId* id);
// The name behind an id that intern() returned.
const std::string& name(KindId id);
// Number of kinds interned so far: ids are [0, count()).
size_t count();
}  // namespace kinds

}  // namespace harvest
