// AgentAllocations: one entry per holder, found by holder; erasing moves the last entry into
// the hole and leaves every other entry as it was.
#include "allocator/agent_allocations.h"

#include <gtest/gtest.h>

#include <map>

#include "resources/parse.h"

namespace harvest {
namespace {

Resources R(const char* text) {
  return parseResources(text).value();
}

// The entries as a map, to compare whatever their order.
std::map<Holder, Resources> held(const AgentAllocations& allocations) {
  return {allocations.begin(), allocations.end()};
}

const Holder kA{FrameworkIdx(0), RoleIdx(1)};
const Holder kB{FrameworkIdx(1), RoleIdx(1)};
const Holder kC{FrameworkIdx(1), RoleIdx(2)};

TEST(AgentAllocationsTest, OneEntryPerHolderFoundByHolder) {
  AgentAllocations allocations;
  EXPECT_TRUE(allocations.try_emplace(kA, R("cpus:1")).second);
  EXPECT_TRUE(allocations.try_emplace(kB, R("mem:64")).second);
  const auto [again, added] = allocations.try_emplace(kA, R("cpus:5"));
  EXPECT_FALSE(added);
  EXPECT_EQ(again->second, R("cpus:1")) << "an existing entry is not replaced";
  EXPECT_EQ(allocations.size(), 2u);
  EXPECT_EQ(allocations.count(kB), 1u);
  EXPECT_EQ(allocations.count(kC), 0u);
  EXPECT_EQ(allocations.find(kC), allocations.end());
  EXPECT_EQ(allocations.find(kB)->second, R("mem:64"));
}

TEST(AgentAllocationsTest, ErasingKeepsEveryOtherEntry) {
  AgentAllocations allocations;
  allocations.try_emplace(kA, R("cpus:1"));
  allocations.try_emplace(kB, R("mem:64;ports:[31000-31010]"));
  allocations.try_emplace(kC, R("disk:10"));
  allocations.erase(allocations.find(kA));  // The first: the last takes its place.
  EXPECT_EQ(held(allocations), (std::map<Holder, Resources>{{kB, R("mem:64;ports:[31000-31010]")},
                                                            {kC, R("disk:10")}}));
  allocations.erase(allocations.find(kC));  // The last.
  EXPECT_EQ(held(allocations),
            (std::map<Holder, Resources>{{kB, R("mem:64;ports:[31000-31010]")}}));
  allocations.erase(allocations.find(kB));
  EXPECT_TRUE(allocations.empty());
  EXPECT_TRUE(allocations.try_emplace(kA, R("cpus:2")).second) << "usable again";
  EXPECT_EQ(held(allocations), (std::map<Holder, Resources>{{kA, R("cpus:2")}}));
}

}  // namespace
}  // namespace harvest
