// RangeSet: a set of unsigned integers (ports) kept as sorted, disjoint, non-adjacent closed
// intervals. Union, difference and containment are linear merges.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <string>

namespace harvest {

struct Interval {
  uint64_t begin;  // Inclusive.
  uint64_t end;    // Inclusive; begin <= end.
  friend bool operator==(const Interval&, const Interval&) = default;
};

class RangeSet {
 public:
  // The largest value a range may hold: keeps counts (and Scalar conversions) far from overflow.
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 40) - 1;

  RangeSet() = default;
  RangeSet(std::initializer_list<Interval> intervals);

  bool empty() const { return intervals_.empty(); }
  // Number of integers in the set.
  uint64_t count() const;
  const auto& intervals() const { return intervals_; }

  void add(Interval interval);
  RangeSet& operator+=(const RangeSet& other);
  RangeSet& operator-=(const RangeSet& other);
  bool contains(const RangeSet& other) const;
  bool intersects(const RangeSet& other) const;
  friend bool operator==(const RangeSet&, const RangeSet&) = default;

  // Mesos form: "[31000-32000, 33000-33000]".
  std::string toString() const;

 private:
  boost::container::small_vector<Interval, 2> intervals_;
};

}  // namespace harvest
