// UsageSample: what the agent measured its executors using, for the estimator and the QoS
// controller. The ledger books what executors were given; only measurement shows what they
// leave idle (usage slack) and when the host is under pressure.
#pragma once

#include "resources/quantities.h"

namespace harvest::agent {

struct UsageSample {
  // Measured usage of regular and non-throttleable revocable executors together.
  Quantities used;
  // Measured usage of throttleable revocable executors.
  Quantities throttleableUsed;
};

}  // namespace harvest::agent
