// Durations as operators write them in flags, in Mesos's syntax: a number and a unit
// ("100ms", "30secs", "5mins", "1hrs", "2days"; also ns, us, weeks), or a plain number meaning
// seconds, so values written before units existed ("0.1", "60") keep their meaning.
#pragma once

#include <string>

#include "common/status.h"
#include "common/time.h"

namespace harvest {

// Non-negative and finite; "0" is allowed (callers decide whether zero means "off").
// Fractions are allowed in every unit ("0.5secs", "1.5hrs").
Result<Duration> parseDuration(const std::string& text);

}  // namespace harvest
