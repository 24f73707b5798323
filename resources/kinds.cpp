#include "resources/kinds.h"

#include <glog/logging.h>

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace harvest::kinds {
namespace {

// Names live in a fixed array so name() can read them without the lock: an entry is written
// once, before `published` makes it visible.
struct Table {
  std::mutex mutex;
  std::unordered_map<std::string, KindId> ids;
  std::array<std::string, kMaxKinds> names;
  std::atomic<size_t> published{0};

  Table() {
    for (const char* builtin : {"cpus", "mem", "disk", "ports", "gpus"}) add(builtin);
  }
  KindId add(std::string_view name) {
    const size_t id = published.load(std::memory_order_relaxed);
    names[id] = std::string(name);
    ids.emplace(names[id], static_cast<KindId>(id));
    published.store(id + 1, std::memory_order_release);
    return static_cast<KindId>(id);
  }
};

Table& table() {
  static Table* instance = new Table();  // Never destroyed: ids outlive static destructors.
  return *instance;
}

}  // namespace

bool intern(std::string_view name, KindId* id) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) {
    *id = it->second;
    return true;
  }
  if (t.published.load(std::memory_order_relaxed) >= kMaxKinds) return false;
  *id = t.add(name);
  return true;
}

const std::string& name(KindId id) {
  Table& t = table();
  CHECK_LT(id, t.published.load(std::memory_order_acquire)) << "unknown resource kind id";
  return t.names[id];
}

size_t count() {
  return table().published.load(std::memory_order_acquire);
}

}  // namespace harvest::kinds
