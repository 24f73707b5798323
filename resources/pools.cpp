#include "resources/pools.h"

#include <deque>
#include <map>
#include <mutex>

#include "resources/roles.h"

namespace harvest {
namespace {

// Keyed by a canonical encoding of the stack; pools live in a deque so references stay valid.
struct PoolTable {
  std::mutex mutex;
  std::map<std::string, PoolId> ids;
  std::deque<Pool> pools{Pool{}};
};

PoolTable& table() {
  static PoolTable* instance = new PoolTable();  // Never destroyed: ids outlive statics.
  return *instance;
}

std::string encode(const std::vector<Reservation>& stack) {
  std::string key;
  for (const Reservation& r : stack) {
    key += std::to_string(static_cast<int>(r.type)) + '\x1f' + r.role + '\x1f' + r.principal;
    for (const auto& [k, v] : r.labels) key += '\x1f' + k + '=' + v;
    key += '\x1e';
  }
  return key;
}

}  // namespace

const std::string& Pool::role() const {
  static const std::string kDefault(roles::kDefaultRole);
  return stack.empty() ? kDefault : stack.back().role;
}

namespace pools {

Result<PoolId> intern(const std::vector<Reservation>& stack) {
  for (size_t i = 0; i < stack.size(); ++i) {
    const Reservation& r = stack[i];
    if (r.role == roles::kDefaultRole) {
      return Result<PoolId>::invalidArgument("a reservation cannot be made to role '*'");
    }
    if (Status valid = roles::validate(r.role); !valid.ok()) return valid;
    if (i > 0) {
      const Reservation& below = stack[i - 1];
      if (r.role == below.role || !roles::isWithin(r.role, below.role)) {
        return Result<PoolId>::invalidArgument("reservation to '" + r.role +
                                               "' does not refine the reservation below it to '" +
                                               below.role + "'");
      }
      if (r.type == Reservation::Type::kStatic && below.type == Reservation::Type::kDynamic) {
        return Result<PoolId>::invalidArgument("a static reservation cannot refine a dynamic one");
      }
    }
  }
  PoolTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const std::string key = encode(stack);
  if (auto it = t.ids.find(key); it != t.ids.end()) return it->second;
  const auto id = static_cast<PoolId>(t.pools.size());
  t.pools.push_back(Pool{stack});
  t.ids.emplace(key, id);
  return id;
}

const Pool& get(PoolId id) {
  PoolTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  CHECK_LT(id, t.pools.size()) << "unknown pool id";
  return t.pools[id];
}

PoolId parent(PoolId id) {
  const Pool& pool = get(id);
  if (pool.stack.size() <= 1) return kUnreservedPool;
  std::vector<Reservation> below(pool.stack.begin(), pool.stack.end() - 1);
  return intern(below).value();  // Valid: a prefix of a valid stack is valid.
}

size_t count() {
  PoolTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.pools.size();
}

}  // namespace pools
}  // namespace harvest
