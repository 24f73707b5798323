// HistoryStore: where the role-history file lives, and the two-file scheme that keeps a
// known-good copy.
//
//   <path>       the latest save; replaced atomically by every save().
//   <path>.prev  the last file that loaded successfully. Written only by load(), after the
//                primary file loaded (a copy of its bytes, also by atomic replace), so an
//                older good file is kept until a newer one has proven it loads.
//   <path>.tmp   transient, during a write (see writeFileAtomically).
//
// load() tries <path>, then <path>.prev; each file that cannot be used is logged as a
// WARNING with its reason. If neither loads, the history is left untouched (empty at
// start: bootstrap) and the report says why.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/atomic_file.h"
#include "common/status.h"
#include "role_history/role_history.h"

namespace harvest {

class HistoryStore {
 public:
  explicit HistoryStore(std::string path) : path_(std::move(path)), prev_(path_ + ".prev") {}

  const std::string& path() const { return path_; }
  const std::string& prevPath() const { return prev_; }

  // Blocking I/O: call from a writer thread with encodeHistory(snapshot).
  Status save(std::string_view bytes) const { return writeFileAtomically(path_, bytes); }

  HistoryLoadReport load(RoleHistory& history, Time now, const RoleLookup& lookup) const;

 private:
  std::string path_;
  std::string prev_;
};

}  // namespace harvest
