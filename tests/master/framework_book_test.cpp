#include "master/framework_book.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace harvest::master {
namespace {

FrameworkEntry entry(const std::string& id, Scheduler* scheduler = nullptr) {
  FrameworkEntry framework;
  framework.id = id;
  framework.info.mutable_id()->set_value(id);
  framework.info.set_name("name of " + id);
  framework.scheduler = scheduler;
  return framework;
}

std::vector<std::string> idsVisited(const FrameworkBook& book) {
  std::vector<std::string> ids;
  book.forEach([&](const FrameworkEntry& framework) { ids.push_back(framework.id); });
  return ids;
}

TEST(FrameworkBookTest, MintsIdsFromOneWithTheRunIdInThem) {
  FrameworkBook plain("", 10);
  EXPECT_EQ(plain.mintId(), "framework-1");
  EXPECT_EQ(plain.mintId(), "framework-2");
  FrameworkBook run("r7", 10);
  EXPECT_EQ(run.mintId(), "framework-r7-1");
}

TEST(FrameworkBookTest, SlotsAreDenseInArrivalOrderAndListsAreInIdOrder) {
  FrameworkBook book("", 10);
  EXPECT_EQ(book.add(entry("framework-2")).slot, 0u);
  EXPECT_EQ(book.add(entry("framework-10")).slot, 1u);
  EXPECT_EQ(book.add(entry("framework-1")).slot, 2u);
  EXPECT_EQ(book.size(), 3u);
  EXPECT_EQ(book.slotOf("framework-10"), FrameworkSlot(1));
  EXPECT_EQ(book.slotOf("framework-3"), std::nullopt);
  EXPECT_EQ(book.at(2).id, "framework-1");
  EXPECT_EQ(book.find("framework-2"), &book.at(0));
  EXPECT_EQ(book.find("framework-3"), nullptr);
  EXPECT_EQ(idsVisited(book),
            (std::vector<std::string>{"framework-1", "framework-10", "framework-2"}));
}

TEST(FrameworkBookTest, AnEntryStaysWhereItIsWhileOthersSubscribe) {
  FrameworkBook book("", 10);
  FrameworkEntry& first = book.add(entry("framework-1"));
  for (int i = 2; i <= 200; ++i) book.add(entry("framework-" + std::to_string(i)));
  EXPECT_EQ(&first, book.find("framework-1"));
  EXPECT_EQ(first.id, "framework-1");
}

TEST(FrameworkBookTest, ARemovedFrameworkStaysKnownAndCompletesOnceKeepingTheNewest) {
  Scheduler scheduler;
  FrameworkBook book("", 2);
  for (const char* id : {"a", "b", "c"}) book.add(entry(id, &scheduler));
  book.markRemoved("a");
  book.markRemoved("a");  // A second teardown.
  EXPECT_TRUE(book.isRemoved("a"));
  EXPECT_FALSE(book.isRemoved("b"));
  EXPECT_EQ(book.find("a")->scheduler, nullptr);
  EXPECT_EQ(book.find("b")->scheduler, &scheduler);
  ASSERT_EQ(book.completed().size(), 1u);
  EXPECT_EQ(book.completed()[0].id().value(), "a");
  book.markRemoved("b");
  book.markRemoved("c");
  ASSERT_EQ(book.completed().size(), 2u);
  EXPECT_EQ(book.completed()[0].id().value(), "b");
  EXPECT_EQ(book.completed()[1].id().value(), "c");
  EXPECT_EQ(book.removed(), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(idsVisited(book), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(FrameworkBookTest, HeldUpdatesGoToTheNextSchedulerInOrderOnce) {
  FrameworkBook book("", 10);
  FrameworkEntry& away = book.add(entry("a"));
  FrameworkEntry& other = book.add(entry("b"));
  TaskStatus first;
  first.task = "t1";
  first.framework = "a";
  TaskStatus second = first;
  second.task = "t2";
  book.hold(away, first);
  book.hold(away, second);
  EXPECT_TRUE(book.takeHeld(other).empty());
  const std::vector<TaskStatus> held = book.takeHeld(away);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].task, "t1");
  EXPECT_EQ(held[1].task, "t2");
  EXPECT_TRUE(book.takeHeld(away).empty());
}

TEST(FrameworkBookTest, RestoredRemovedIdsAreRefusedAndCompletedTrimmed) {
  FrameworkBook book("", 1);
  v1::FrameworkInfo older, newer;
  older.mutable_id()->set_value("old");
  newer.mutable_id()->set_value("new");
  book.restore({"old", "new"}, {older, newer});
  EXPECT_TRUE(book.isRemoved("old"));
  EXPECT_FALSE(book.contains("old"));
  ASSERT_EQ(book.completed().size(), 1u);
  EXPECT_EQ(book.completed()[0].id().value(), "new");
}

}  // namespace
}  // namespace harvest::master
