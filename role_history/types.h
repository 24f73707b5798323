// Ids and time shared by the role-history files.
//
// The history is indexed by the allocator's own dense ids (common/ids.h), so the allocator never
// translates ids on its hot path, and this library needs nothing of the allocator.
#pragma once

#include "common/ids.h"
#include "common/time.h"
