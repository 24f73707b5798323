#include "resources/inline_vector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest {
namespace {

// Strings long enough to live on the heap: a lost, doubled or stale element shows up as a
// wrong value here and as a leak or double free under the sanitizers.
std::string word(int i) {
  return "element number " + std::to_string(i) + " of the inline vector test";
}

template <uint32_t N>
std::vector<std::string> contents(const InlineVector<std::string, N>& vector) {
  return {vector.begin(), vector.end()};
}

TEST(InlineVectorTest, InsertsAtFrontMiddleAndEndAcrossTheInlineCapacity) {
  InlineVector<std::string, 2> vector;
  vector.push_back(word(2));
  vector.insert(vector.begin(), word(0));
  vector.insert(vector.begin() + 1, word(1));  // Past inline: moves to the heap.
  vector.push_back(word(4));
  EXPECT_EQ(*vector.insert(vector.end() - 1, word(3)), word(3));
  EXPECT_EQ(contents(vector),
            (std::vector<std::string>{word(0), word(1), word(2), word(3), word(4)}));
  EXPECT_EQ(vector.size(), 5u);
  EXPECT_EQ(vector.front(), word(0));
  EXPECT_EQ(vector.back(), word(4));
  EXPECT_EQ(vector.at(2), word(2));
  EXPECT_THROW(vector.at(5), std::out_of_range);
}

TEST(InlineVectorTest, InsertingACopyOfItsOwnElement) {
  InlineVector<std::string, 2> vector;
  vector.push_back(word(1));
  vector.push_back(word(2));
  vector.insert(vector.begin(), vector[1]);
  EXPECT_EQ(contents(vector), (std::vector<std::string>{word(2), word(1), word(2)}));
}

TEST(InlineVectorTest, EraseAndClear) {
  InlineVector<std::string, 4> vector;
  for (int i = 0; i < 4; ++i) vector.push_back(word(i));
  EXPECT_EQ(*vector.erase(vector.begin() + 1), word(2));
  vector.erase(vector.end() - 1);
  EXPECT_EQ(contents(vector), (std::vector<std::string>{word(0), word(2)}));
  vector.clear();
  EXPECT_TRUE(vector.empty());
  vector.push_back(word(7));
  EXPECT_EQ(contents(vector), (std::vector<std::string>{word(7)}));
}

TEST(InlineVectorTest, MovesLeaveTheSourceEmptyWhetherInlineOrOnTheHeap) {
  InlineVector<std::string, 2> small;
  small.push_back(word(0));
  InlineVector<std::string, 2> large;
  for (int i = 0; i < 3; ++i) large.push_back(word(i));

  InlineVector<std::string, 2> fromSmall(std::move(small));
  InlineVector<std::string, 2> fromLarge(std::move(large));
  EXPECT_EQ(contents(fromSmall), (std::vector<std::string>{word(0)}));
  EXPECT_EQ(contents(fromLarge), (std::vector<std::string>{word(0), word(1), word(2)}));
  EXPECT_TRUE(small.empty());  // NOLINT(bugprone-use-after-move): documented state.
  EXPECT_TRUE(large.empty());  // NOLINT(bugprone-use-after-move): documented state.

  // Assigning over a heap-held vector, then reusing the moved-from ones.
  fromLarge = std::move(fromSmall);
  EXPECT_EQ(contents(fromLarge), (std::vector<std::string>{word(0)}));
  large.push_back(word(9));
  small = std::move(large);
  EXPECT_EQ(contents(small), (std::vector<std::string>{word(9)}));
  InlineVector<std::string, 2>& alias = fromLarge;
  fromLarge = std::move(alias);
  EXPECT_EQ(contents(fromLarge), (std::vector<std::string>{word(0)}));
}

TEST(InlineVectorTest, EraseIfKeepsTheRestInOrderInlineAndOnTheHeap) {
  for (int size : {2, 7}) {
    InlineVector<std::string, 2> words;
    for (int i = 0; i < size; ++i) words.push_back(word(i));
    words.eraseIf([](const std::string& w) { return w == word(0) || w == word(3); });
    std::vector<std::string> expected;
    for (int i = 1; i < size; ++i) {
      if (i != 3) expected.push_back(word(i));
    }
    EXPECT_EQ(contents(words), expected) << size;
    words.push_back(word(9));  // Still usable past what was erased.
    expected.push_back(word(9));
    EXPECT_EQ(contents(words), expected) << size;
  }
}

TEST(InlineVectorTest, CopiesAreIndependentAndEqual) {
  InlineVector<std::string, 2> original;
  for (int i = 0; i < 3; ++i) original.push_back(word(i));
  InlineVector<std::string, 2> copy(original);
  EXPECT_EQ(copy, original);
  copy[0] = word(5);
  EXPECT_NE(copy, original);
  EXPECT_EQ(original[0], word(0));

  InlineVector<std::string, 2> assigned;
  assigned.push_back(word(8));
  assigned = original;
  EXPECT_EQ(contents(assigned), contents(original));
  const InlineVector<std::string, 2>& self = assigned;
  assigned = self;
  EXPECT_EQ(contents(assigned), (std::vector<std::string>{word(0), word(1), word(2)}));
  InlineVector<std::string, 2> shorter;
  shorter.push_back(word(0));
  EXPECT_NE(shorter, original);
}

}  // namespace
}  // namespace harvest
