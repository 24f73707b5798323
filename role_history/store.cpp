#include "role_history/store.h"

#include <glog/logging.h>

#include <optional>

#include "role_history/codec.h"

namespace harvest {
namespace {

struct Candidate {
  std::string bytes;
  std::optional<HistorySnapshot> decoded;
  bool missing = false;  // No file at all: the normal first start.
  std::string reason;    // Why it cannot be used; empty when decoded.
};

Candidate read(const std::string& path) {
  Candidate c;
  Result<std::string> bytes = readWholeFile(path);
  if (!bytes.ok()) {
    c.missing = bytes.code() == StatusCode::kNotFound;
    c.reason = bytes.message();
    return c;
  }
  c.bytes = std::move(bytes).value();
  Result<HistorySnapshot> decoded = decodeHistory(c.bytes);
  if (!decoded.ok()) {
    c.reason = decoded.message();
    return c;
  }
  c.decoded = std::move(decoded).value();
  return c;
}

}  // namespace

HistoryLoadReport HistoryStore::load(RoleHistory& history, Time now,
                                     const RoleLookup& lookup) const {
  Candidate primary = read(path_);
  if (primary.decoded) {
    HistoryLoadReport report = history.load(*primary.decoded, now, lookup);
    report.source = path_;
    // Only now is this file known to load: make it the fallback for the next start.
    if (Status kept = writeFileAtomically(prev_, primary.bytes); !kept.ok()) {
      LOG(WARNING) << "Role history loaded but not kept as " << prev_ << ": " << kept.message();
    }
    return report;
  }
  // A missing file is the normal first start; anything else deserves a warning.
  const bool firstStart = primary.missing;
  LOG_IF(WARNING, !firstStart) << "Role history " << path_ << " not loaded: " << primary.reason;

  Candidate prev = read(prev_);
  if (prev.decoded) {
    HistoryLoadReport report = history.load(*prev.decoded, now, lookup);
    report.source = prev_;
    report.primaryReason = primary.reason;
    LOG(WARNING) << "Role history loaded from the previous good file " << prev_;
    return report;
  }
  if (!prev.missing) {
    LOG(WARNING) << "Role history " << prev_ << " not loaded: " << prev.reason;
  }
  if (firstStart && prev.missing) {
    LOG(INFO) << "Role history starts empty: no file at " << path_ << " yet";
  } else {
    LOG(WARNING) << "Role history starts empty (bootstrap): " << primary.reason;
  }
  HistoryLoadReport report;
  report.bootstrapped = true;
  report.reason = primary.reason;
  report.primaryReason = primary.reason;
  return report;
}

}  // namespace harvest
