// Counts calls to the global operator new in a benchmark binary that links
// allocation_counter.cpp, which replaces it (a separate file, so the compiler never inlines the
// replacement delete's free() into code that allocated with new).
#pragma once

#include <cstdint>

namespace harvest::bench {

// operator new calls (array and nothrow forms included) since the program started.
uint64_t allocationsSoFar();

}  // namespace harvest::bench
