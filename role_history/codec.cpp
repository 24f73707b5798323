#include "role_history/codec.h"

#include <glog/logging.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <numeric>
#include <unordered_set>

#include "protos/role_history.pb.h"
#include "role_history/checksum.h"

namespace harvest {
namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// Records naming an agent outside `s.agents` cannot be written; they are left out (and
// `written` says how many went in, for the footer).
std::string encodeBody(const HistorySnapshot& s, uint64_t* written) {
  v1::RoleHistoryBody body;
  body.mutable_roles()->Reserve(static_cast<int>(s.roles.size()));
  for (const HistorySnapshot::Role& role : s.roles) {
    v1::RoleHistoryRole* r = body.add_roles();
    r->set_id(role.id);
    r->set_name(role.name);
  }

  // Record indices in agent order (stable, so each agent's records keep their order).
  std::vector<uint32_t> order(s.records.size());
  std::iota(order.begin(), order.end(), 0u);
  const bool grouped =
      std::is_sorted(s.records.begin(), s.records.end(),
                     [](const auto& a, const auto& b) { return a.agent < b.agent; });
  if (!grouped) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return s.records[a].agent < s.records[b].agent;
    });
  }

  body.mutable_agents()->Reserve(static_cast<int>(s.agents.size()));
  size_t next = 0;
  for (uint32_t agent = 0; agent < s.agents.size(); ++agent) {
    v1::RoleHistoryAgent* a = body.add_agents();
    a->set_agent(s.agents[agent]);
    while (next < order.size() && s.records[order[next]].agent == agent) {
      const HistorySnapshot::Record& rec = s.records[order[next++]];
      v1::RoleHistoryAgent::Record* r = a->add_records();
      r->set_role(rec.role);
      r->set_active(rec.active);
      r->set_last_used_nanos(rec.lastUsed.nanos());
    }
  }
  DCHECK_EQ(next, order.size()) << "history snapshot has a record for an agent out of range";
  *written = next;
  return body.SerializeAsString();
}

Status validateBody(const v1::RoleHistoryBody& body) {
  std::unordered_set<uint32_t> ids;
  std::unordered_set<std::string_view> names;
  for (const v1::RoleHistoryRole& role : body.roles()) {
    if (role.name().empty())
      return Status::corruption("role id " + std::to_string(role.id()) + " has an empty name");
    if (!ids.insert(role.id()).second) {
      return Status::corruption("role id " + std::to_string(role.id()) + " appears twice");
    }
    if (!names.insert(role.name()).second) {
      return Status::corruption("role name '" + role.name() + "' appears twice");
    }
  }
  std::unordered_set<std::string_view> agents;
  agents.reserve(static_cast<size_t>(body.agents_size()));
  std::vector<uint32_t> seen;
  for (const v1::RoleHistoryAgent& agent : body.agents()) {
    if (agent.agent().empty()) return Status::corruption("an agent has an empty id");
    if (!agents.insert(agent.agent()).second) {
      return Status::corruption("agent '" + agent.agent() + "' appears twice");
    }
    seen.clear();
    for (const v1::RoleHistoryAgent::Record& rec : agent.records()) {
      if (!ids.count(rec.role())) {
        return Status::corruption("agent '" + agent.agent() +
                                  "' has a record for unknown role id " +
                                  std::to_string(rec.role()));
      }
      seen.push_back(rec.role());
    }
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) {
      return Status::corruption("agent '" + agent.agent() + "' has two records for one role");
    }
  }
  return Status();
}

}  // namespace

std::string encodeHistory(const HistorySnapshot& snapshot) {
  v1::RoleHistoryFile file;
  v1::RoleHistoryHeader* header = file.mutable_header();
  header->set_magic(kHistoryMagic);
  header->set_format_version(kHistoryFormatVersion);
  header->set_save_time_nanos(snapshot.saveTime.nanos());
  uint64_t written = 0;
  file.set_body(encodeBody(snapshot, &written));
  v1::RoleHistoryFooter* footer = file.mutable_footer();
  footer->set_record_count(written);
  footer->set_body_crc32(crc32(file.body()));
  return file.SerializeAsString();
}

Result<HistorySnapshot> decodeHistory(std::string_view bytes) {
  using R = Result<HistorySnapshot>;
  if (bytes.empty()) return Status::corruption("empty file");
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return Status::corruption("file too large");

  // Partial parse first, so a file from a newer writer is reported as such even when it
  // lacks fields this version requires.
  v1::RoleHistoryFile file;
  if (!file.ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::corruption("unparsable (truncated or not a role history file)");
  }
  if (!file.has_header() || !file.header().has_magic()) {
    return Status::corruption("incomplete file (truncated?): no header");
  }
  if (file.header().magic() != kHistoryMagic) {
    return Status::corruption("not a role history file (magic " + hex32(file.header().magic()) +
                              ")");
  }
  const uint32_t version = file.header().format_version();
  if (version > kHistoryFormatVersion) {
    return Status::corruption("format version " + std::to_string(version) +
                              " is newer than the supported version " +
                              std::to_string(kHistoryFormatVersion));
  }
  if (!file.IsInitialized()) {
    return Status::corruption("incomplete file (truncated?): missing " +
                              file.InitializationErrorString());
  }
  if (version == 0) return Status::corruption("format version 0 is not supported");

  const uint32_t expected = file.footer().body_crc32();
  const uint32_t actual = crc32(file.body());
  if (expected != actual) {
    return Status::corruption("checksum mismatch: footer says " + hex32(expected) + ", body has " +
                              hex32(actual));
  }
  v1::RoleHistoryBody body;
  if (!body.ParseFromString(file.body())) return Status::corruption("body unparsable");
  uint64_t count = 0;
  for (const v1::RoleHistoryAgent& agent : body.agents()) count += agent.records_size();
  if (count != file.footer().record_count()) {
    return Status::corruption("record count mismatch: footer says " +
                              std::to_string(file.footer().record_count()) + ", body has " +
                              std::to_string(count));
  }
  if (Status valid = validateBody(body); !valid.ok()) return R(valid);

  HistorySnapshot s;
  s.saveTime = Time::fromNanos(file.header().save_time_nanos());
  s.roles.reserve(static_cast<size_t>(body.roles_size()));
  for (v1::RoleHistoryRole& role : *body.mutable_roles()) {
    s.roles.push_back({role.id(), std::move(*role.mutable_name())});
  }
  s.agents.reserve(static_cast<size_t>(body.agents_size()));
  s.records.reserve(count);
  for (v1::RoleHistoryAgent& agent : *body.mutable_agents()) {
    const auto index = static_cast<uint32_t>(s.agents.size());
    s.agents.push_back(std::move(*agent.mutable_agent()));
    for (const v1::RoleHistoryAgent::Record& rec : agent.records()) {
      s.records.push_back(
          {index, rec.role(), rec.active(), Time::fromNanos(rec.last_used_nanos())});
    }
  }
  return s;
}

}  // namespace harvest
