// HARVEST_INVARIANT: a state that only a bug in our own bookkeeping can reach.
//
// Input from outside (a framework, an agent, a file) is refused with a Status; an invariant is
// for what the code itself promised, such as "every allocation has a holder". Where such a
// promise is broken, the bug is nearest its cause right there, so debug and sanitizer builds
// stop on it with the site and a description. A release build keeps serving: it counts the
// violation (invariantViolations()), logs it once per site, and the macro yields false so the
// caller takes the safe path it would have taken before the invariant was written down:
//
//   auto holder = holders_.find(id);
//   if (!HARVEST_INVARIANT(holder != holders_.end(), "an allocation's holder is tracked")) return;
//
// The check at the site is one branch the compiler is told will not be taken; everything the
// violation does is in out-of-line cold functions, so the hot path costs the same in release.
#pragma once

#include <cstdint>

namespace harvest {

// How many invariants were found broken in this process (only the release behaviour counts;
// the debug behaviour stops the process instead).
uint64_t invariantViolations();

namespace invariant_detail {

// Both take `what` as the description of the invariant that held until now.
[[noreturn, gnu::cold, gnu::noinline]] bool stop(const char* what, const char* file, int line);
[[gnu::cold, gnu::noinline]] bool count(const char* what, const char* file, int line);

}  // namespace invariant_detail
}  // namespace harvest

// The two behaviours by name, so that a test can exercise either in any build.
#define HARVEST_INVARIANT_OR_STOP(cond, what)   \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? true                                   \
       : ::harvest::invariant_detail::stop((what), __FILE__, __LINE__))
#define HARVEST_INVARIANT_OR_COUNT(cond, what)  \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? true                                   \
       : ::harvest::invariant_detail::count((what), __FILE__, __LINE__))

// Sanitizer builds stop even when optimized (the fuzz build): that is where bugs are hunted.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define HARVEST_INVARIANTS_STOP 1
#endif
#endif
#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(HARVEST_SANITIZE)
#define HARVEST_INVARIANTS_STOP 1
#endif

#if defined(HARVEST_INVARIANTS_STOP)
#define HARVEST_INVARIANT(cond, what) HARVEST_INVARIANT_OR_STOP(cond, what)
#else
#define HARVEST_INVARIANT(cond, what) HARVEST_INVARIANT_OR_COUNT(cond, what)
#endif
