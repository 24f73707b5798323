#include "common/invariant.h"

#include <glog/logging.h>

#include <atomic>
#include <mutex>
#include <set>
#include <utility>

namespace harvest {
namespace {

std::atomic<uint64_t> violations{0};

// True the first time a site reports: a broken invariant on a hot path would otherwise flood
// the log. The set only grows by the number of sites in the code.
bool firstAtSite(const char* file, int line) {
  static std::mutex mutex;
  static std::set<std::pair<const char*, int>> reported;
  std::lock_guard<std::mutex> lock(mutex);
  return reported.emplace(file, line).second;
}

}  // namespace

uint64_t invariantViolations() {
  return violations.load(std::memory_order_relaxed);
}

namespace invariant_detail {

bool stop(const char* what, const char* file, int line) {
  LOG(FATAL) << "invariant broken at " << file << ":" << line << ": " << what;
}

bool count(const char* what, const char* file, int line) {
  violations.fetch_add(1, std::memory_order_relaxed);
  if (firstAtSite(file, line)) {
    LOG(ERROR) << "invariant broken at " << file << ":" << line << ": " << what
               << " (a bug; counted, and later breaks at this site are not logged)";
  }
  return false;
}

}  // namespace invariant_detail
}  // namespace harvest
