// Dense ids: small integers the allocator assigns and indexes its arrays with.
//
// Each kind of id is its own type: a role id passed where an agent id is expected does not
// compile, because turning one into the other would take two user-defined conversions (id ->
// integer -> id) and C++ allows one. An id is made from an integer, and read as one to index an
// array, implicitly, because that is what dense ids are for; ids compare as integers.
#pragma once

#include <cstdint>
#include <functional>

namespace harvest {

template <typename Tag>
class DenseId {
 public:
  constexpr DenseId() = default;
  constexpr DenseId(uint32_t value) : value_(value) {}    // NOLINT: see above.
  constexpr operator uint32_t() const { return value_; }  // NOLINT: indexes arrays.
  constexpr DenseId& operator++() {
    ++value_;
    return *this;
  }
  constexpr DenseId operator++(int) { return DenseId(value_++); }

 private:
  uint32_t value_ = 0;
};

using RoleIdx = DenseId<struct RoleTag>;
using AgentIdx = DenseId<struct AgentTag>;
using FrameworkIdx = DenseId<struct FrameworkTag>;

}  // namespace harvest

template <typename Tag>
struct std::hash<harvest::DenseId<Tag>> {
  size_t operator()(harvest::DenseId<Tag> id) const noexcept { return std::hash<uint32_t>{}(id); }
};
