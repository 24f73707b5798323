// HistorySnapshot: the persistent content of the role history as plain data.
//
// RoleHistory::snapshot() fills it on the allocation thread (copies only, no protobuf), so
// encoding and I/O can run elsewhere; decodeHistory() produces one from a file and
// RoleHistory::load() thaws it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "role_history/types.h"

namespace harvest {

struct HistorySnapshot {
  struct Role {
    uint32_t id = 0;  // The allocator's RoleIdx at save time; only meaningful in this file.
    std::string name;
    friend bool operator==(const Role&, const Role&) = default;
  };
  struct Record {
    uint32_t agent = 0;  // Index into `agents`.
    uint32_t role = 0;   // A Role::id.
    uint32_t active = 0;
    Time lastUsed;
    friend bool operator==(const Record&, const Record&) = default;
  };

  Time saveTime;
  std::vector<Role> roles;
  std::vector<std::string> agents;  // Agent ids (hostnames), each once.
  // Grouped by agent: all records of one agent are adjacent.
  std::vector<Record> records;

  friend bool operator==(const HistorySnapshot&, const HistorySnapshot&) = default;
};

}  // namespace harvest
