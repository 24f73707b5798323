#include "common/time.h"

#include <ostream>

namespace harvest {

std::ostream& operator<<(std::ostream& out, Duration d) {
  return out << d.nanos() << "ns";
}

std::ostream& operator<<(std::ostream& out, Time t) {
  return out << "@" << t.nanos() << "ns";
}

}  // namespace harvest
