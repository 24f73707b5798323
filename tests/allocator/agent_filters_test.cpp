// AgentFilters: filters stay where they were appended and a sorted index finds them, so every
// insertion and erasure must keep the index and the entries in step. Checked against a
// std::map after each step of a seeded random sequence, and on the cases that move an entry.
// Filters refusing the same resources share one refused set: each must still refuse exactly
// what it was told to, whatever the others sharing it are told later.
#include "allocator/agent_filters.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "resources/parse.h"

namespace harvest {
namespace {

Holder holder(uint32_t framework, uint32_t role = 0) {
  return Holder{FrameworkIdx{framework}, RoleIdx{role}};
}

// The filter for a holder, told apart by its expiry.
Time expiryFor(uint32_t tag) {
  return Time::fromNanos(1000 + tag);
}

Resources R(const char* text) {
  return parseResources(text).value();
}

// Every filter is found under its holder, iteration yields each once, and nothing else is.
void expectSameAs(const AgentFilters& filters, const std::map<Holder, Time>& model) {
  ASSERT_EQ(filters.size(), model.size());
  std::set<Holder> seen;
  for (const auto& [h, filter] : filters) {
    ASSERT_TRUE(seen.insert(h).second) << "a holder listed twice";
    auto expected = model.find(h);
    ASSERT_NE(expected, model.end());
    EXPECT_EQ(filter.expiry, expected->second);
  }
  for (const auto& [h, expiry] : model) {
    const OfferFilter* found = filters.find(h);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->expiry, expiry);
  }
}

TEST(AgentFiltersTest, ObtainAddsOnceAndFindsWhatWasAdded) {
  AgentFilters filters;
  EXPECT_TRUE(filters.empty());
  EXPECT_EQ(filters.find(holder(3)), nullptr);
  OfferFilter& added = filters.obtain(holder(3));
  EXPECT_TRUE(added.refusesNothing());  // New: refuses nothing yet.
  EXPECT_TRUE(filters.refused(added).empty());
  added.expiry = expiryFor(3);
  EXPECT_EQ(&filters.obtain(holder(3)), filters.find(holder(3)));
  EXPECT_EQ(filters.size(), 1u);
  EXPECT_EQ(filters.find(holder(3))->expiry, expiryFor(3));
  EXPECT_EQ(filters.find(holder(3, 1)), nullptr);  // Same framework, another role.
}

TEST(AgentFiltersTest, ErasingMovesTheLastFilterIntoTheHole) {
  AgentFilters filters;
  std::map<Holder, Time> model;
  for (uint32_t f : {5u, 1u, 9u, 3u}) {
    filters.obtain(holder(f)).expiry = expiryFor(f);
    model[holder(f)] = expiryFor(f);
  }
  filters.erase(holder(5));  // The first appended: the last (3) takes its place.
  model.erase(holder(5));
  expectSameAs(filters, model);
  filters.erase(holder(3));  // Now first: 9 moves.
  model.erase(holder(3));
  expectSameAs(filters, model);
  filters.erase(holder(7));  // Not there: nothing changes.
  expectSameAs(filters, model);
  filters.erase(holder(9));  // The last: nothing moves.
  model.erase(holder(9));
  expectSameAs(filters, model);
}

TEST(AgentFiltersTest, EraseIfVisitsEachFilterOnceEvenAsEntriesMove) {
  AgentFilters filters;
  for (uint32_t f = 0; f < 10; ++f) filters.obtain(holder(f)).expiry = expiryFor(f);
  std::multiset<uint32_t> visited;
  filters.eraseIf([&](Holder h, const OfferFilter&) {
    visited.insert(h.framework);
    return h.framework % 3 != 1;  // Keeps 1, 4, 7.
  });
  EXPECT_EQ(visited, (std::multiset<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  expectSameAs(filters,
               {{holder(1), expiryFor(1)}, {holder(4), expiryFor(4)}, {holder(7), expiryFor(7)}});
  filters.clear();
  EXPECT_TRUE(filters.empty());
  EXPECT_EQ(filters.find(holder(4)), nullptr);
}

TEST(AgentFiltersTest, FiltersRefusingTheSameShareOneSetAndEachKeepsItsOwnRefusal) {
  AgentFilters filters;
  const Resources leftover = R("cpus:8;mem:4096;ports:[31000-31001,31005-31010]");
  const Resources other = R("cpus:2;mem:512");
  for (uint32_t f = 0; f < 100; ++f) filters.refuse(filters.obtain(holder(f)), leftover);
  EXPECT_EQ(filters.refusedSetCount(), 1u);  // A storm's 100 refusals of one leftover.
  // Refusing the same again changes nothing; something else takes a set of its own and leaves
  // the others refusing what they did.
  filters.refuse(*filters.find(holder(7)), leftover);
  filters.refuse(*filters.find(holder(3)), other);
  EXPECT_EQ(filters.refusedSetCount(), 2u);
  EXPECT_EQ(filters.refused(*filters.find(holder(3))), other);
  EXPECT_EQ(filters.refused(*filters.find(holder(4))), leftover);
  EXPECT_TRUE(filters.blocks(*filters.find(holder(3)), R("cpus:1")));
  EXPECT_FALSE(filters.blocks(*filters.find(holder(3)), R("cpus:4")));
  EXPECT_TRUE(filters.blocks(*filters.find(holder(4)), R("cpus:4;ports:[31006-31007]")));
  EXPECT_FALSE(filters.blocks(*filters.find(holder(4)), R("cpus:4;ports:[31002-31002]")));
  // Once no filter uses a set it is reused, not a new one made.
  filters.erase(holder(3));
  filters.refuse(filters.obtain(holder(200)), R("cpus:1"));
  EXPECT_EQ(filters.refusedSetCount(), 2u);
  EXPECT_EQ(filters.refused(*filters.find(holder(200))), R("cpus:1"));
  EXPECT_EQ(filters.refused(*filters.find(holder(99))), leftover);
  // A filter found new again (erased, then obtained) refuses nothing and blocks nothing.
  filters.erase(holder(5));
  EXPECT_TRUE(filters.obtain(holder(5)).refusesNothing());
  EXPECT_FALSE(filters.blocks(*filters.find(holder(5)), R("cpus:1")));
}

TEST(AgentFiltersTest, RandomStepsAgreeWithAMap) {
  std::mt19937 random(33);
  const std::vector<Resources> refusable = {R("cpus:1"), R("cpus:1;mem:64"), R("ports:[1-2,4-9]"),
                                            R("cpus:1;ports:[1-2,4-9]")};
  constexpr int kNothing = -1;
  AgentFilters filters;
  std::map<Holder, Time> model;
  std::map<Holder, int> refusedModel;  // Index in `refusable`, or kNothing.
  for (int step = 0; step < 4000; ++step) {
    const Holder h = holder(random() % 60, random() % 3);
    const uint32_t tag = static_cast<uint32_t>(step);
    switch (random() % 5) {
      case 0:
      case 1: {
        OfferFilter& filter = filters.obtain(h);
        filter.expiry = expiryFor(tag);
        model[h] = expiryFor(tag);
        refusedModel.try_emplace(h, kNothing);
        if (random() % 5 == 0) break;  // Obtained and left as it was (new: refusing nothing).
        const int refused = static_cast<int>(random() % refusable.size());
        filters.refuse(filter, refusable[refused]);
        refusedModel[h] = refused;
        break;
      }
      case 2:
        filters.erase(h);
        model.erase(h);
        refusedModel.erase(h);
        break;
      case 3:
        if (random() % 50 == 0) {
          filters.clear();
          model.clear();
          refusedModel.clear();
        }
        break;
      default: {
        const uint32_t modulus = 2 + random() % 5;
        filters.eraseIf([&](Holder x, const OfferFilter&) { return x.framework % modulus == 0; });
        const auto erased = [&](const auto& entry) { return entry.first.framework % modulus == 0; };
        std::erase_if(model, erased);
        std::erase_if(refusedModel, erased);
      }
    }
    ASSERT_NO_FATAL_FAILURE(expectSameAs(filters, model)) << "after step " << step;
    for (const auto& [x, refused] : refusedModel) {
      const OfferFilter& filter = *filters.find(x);
      const Resources& expected = refused == kNothing ? Resources() : refusable[refused];
      ASSERT_EQ(filters.refused(filter), expected) << "after step " << step;
      ASSERT_EQ(filter.refusesNothing(), refused == kNothing) << "after step " << step;
      // cpus:1 is in every refusable set but the ports alone.
      ASSERT_EQ(filters.blocks(filter, refusable[0]), refused != kNothing && refused != 2)
          << "after step " << step;
    }
    // Sets are reused: never more than the filters there have been at once.
    ASSERT_LE(filters.refusedSetCount(), 180u);
  }
}

}  // namespace
}  // namespace harvest
