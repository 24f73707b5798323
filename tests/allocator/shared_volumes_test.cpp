// Shared persistent volumes in the allocator, with Mesos's semantics: a shared volume stays
// offerable while tasks use it, goes to frameworks with SHARED_RESOURCES only, in at most one
// offer per agent per cycle, and is never booked as anyone's allocation nor lent by stage 3.
#include <gtest/gtest.h>

#include "allocator_test_support.h"
#include "testing/volumes/volume_protos.h"

namespace harvest {
namespace {

using testing_support::AllocatorTest;
using testing_support::R;
using testing_support::RecordedOffer;

// A shared volume of `size` disk on `role`'s dynamic reservation.
Resources sharedVolume(const std::string& id, double size, const std::string& role = "web") {
  return testing_volumes::volumeResources(id, size, true, role);
}

// The reserved disk a shared volume is made of: what CREATE consumes and DESTROY gives back.
Resources diskUnder(const Resources& volume) {
  Resources out;
  for (const auto& entry : volume.scalars()) {
    ResourceKey key = entry.key;
    key.volume = kNoVolume;
    key.shared = false;
    out.addScalar(key, entry.amount);
  }
  return out;
}

class SharedVolumesTest : public AllocatorTest {
 protected:
  void addSharingFramework(const std::string& id, const std::string& role) {
    v1::FrameworkInfo info = framework({role});
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::SHARED_RESOURCES);
    ASSERT_TRUE(allocator_->addFramework(id, info, {}, true, {}).ok());
  }
  void addAgentWith(const std::string& id, const Resources& total) {
    ASSERT_TRUE(allocator_->addAgent(id, agentInfo(id), std::nullopt, total, {}).ok());
  }
  void giveBack(const RecordedOffer& offer, const Resources& resources, double refuseSeconds) {
    v1::Filters filters;
    filters.set_refuse_seconds(refuseSeconds);
    ASSERT_TRUE(
        allocator_->recoverResources(offer.framework, offer.agent, offer.role, resources, filters)
            .ok());
  }
};

// Mesos: HierarchicalAllocatorTest.SharedResourcesCapability.
TEST_F(SharedVolumesTest, OnlyFrameworksWithSharedResourcesAreOfferedSharedVolumes) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  addAgentWith("agent", R("cpus:2;mem:1024") + volume);
  addFramework("plain", {"web"});
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "plain");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024"));
  giveBack(offers[0], offers[0].resources, 1000);

  addSharingFramework("sharing", "web");
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "sharing");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + volume);
  // The volume is the agent's, not the holder's: counted in the total, never as allocated.
  EXPECT_EQ(metric("resources/disk/total"), 64);
  EXPECT_EQ(metric("resources/disk/offered_or_allocated"), 0);
  EXPECT_EQ(metric("resources/cpus/offered_or_allocated"), 2);
}

// A task using the volume does not take it from the agent: it comes again with what is left,
// and the task's end gives back its own resources only.
TEST_F(SharedVolumesTest, ASharedVolumeIsOfferedAgainWhileATaskUsesIt) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  addAgentWith("agent", R("cpus:2;mem:1024") + volume);
  addSharingFramework("sharing", "web");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  // A task takes cpus:1;mem:512 and the volume; the master returns the rest.
  const RecordedOffer first = offers[0];
  giveBack(first, R("cpus:1;mem:512"), 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:1;mem:512") + volume);
  giveBack(offers[0], offers[0].resources, 0);

  // The task ends: its resources, the volume among them, come back; the agent is whole again.
  giveBack(first, R("cpus:1;mem:512") + volume, 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + volume);
}

// Mesos offers a shared volume in at most one offer per agent per cycle: with the agent split
// between a role's guarantee, which is also its limit (stage 1), and another role (stage 2),
// only the first offer holds it. The next cycle offers it again.
TEST_F(SharedVolumesTest, ASharedVolumeGoesInOneOfferPerAgentPerCycle) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  addAgentWith("agent", R("cpus:2;mem:1024") + volume);
  const Quantities half = R("cpus:1;mem:512").quantities();
  ASSERT_TRUE(allocator_->updateQuota("web/a", Quota{half, half}).ok());
  addSharingFramework("guaranteed", "web/a");
  addSharingFramework("rest", "web");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offers[0].framework, "guaranteed");
  EXPECT_EQ(offers[0].resources, R("cpus:1;mem:512") + volume);
  EXPECT_EQ(offers[1].framework, "rest");
  EXPECT_EQ(offers[1].resources, R("cpus:1;mem:512"));

  giveBack(offers[1], offers[1].resources, 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].framework, "rest");
  EXPECT_EQ(offers[0].resources, R("cpus:1;mem:512") + volume);
}

// The one-offer rule is per volume, as Mesos keeps it: an agent's volume of another role still
// goes with that role's offer in the same cycle.
TEST_F(SharedVolumesTest, EachSharedVolumeGoesInOneOfferOfTheCycle) {
  initialize();
  const Resources webVolume = sharedVolume("v1", 64, "web");
  const Resources dbVolume = sharedVolume("v2", 32, "db");
  addAgentWith("agent", R("cpus:2;mem:1024;cpus(db):1;mem(db):256") + webVolume + dbVolume);
  // web's guarantee takes the unreserved resources in stage 1; db's reservation goes in stage 2.
  const Quantities all = R("cpus:2;mem:1024").quantities();
  ASSERT_TRUE(allocator_->updateQuota("web", Quota{all, all}).ok());
  addSharingFramework("w", "web");
  addSharingFramework("d", "db");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offers[0].framework, "w");
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + webVolume);
  EXPECT_EQ(offers[1].framework, "d");
  EXPECT_EQ(offers[1].resources, R("cpus(db):1;mem(db):256") + dbVolume);
}

// Giving back only a shared volume (an ACCEPT that used all else) leaves no filter: a filter
// refusing nothing would count as one and hide the framework's real one.
TEST_F(SharedVolumesTest, GivingBackOnlyASharedVolumeSetsNoFilter) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  addAgentWith("agent", R("cpus:2;mem:1024") + volume);
  addSharingFramework("sharing", "web");
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  giveBack(offers[0], volume, 5);
  EXPECT_EQ(metric("offer_filters/roles/web/active"), 0);
  giveBack(offers[0], R("cpus:2;mem:1024"), 5);
  EXPECT_EQ(metric("offer_filters/roles/web/active"), 1);
  EXPECT_TRUE(cycle().empty());
}

// CREATE of a shared volume out of an offer's reserved disk, then DESTROY of it: the volume
// leaves the holder's allocation for the agent's shared volumes, and comes back as disk.
TEST_F(SharedVolumesTest, CreateAndDestroyASharedVolumeInAnOffer) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  const Resources disk = diskUnder(volume);
  addAgentWith("agent", R("cpus:2;mem:1024") + disk);
  addSharingFramework("sharing", "web");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  ASSERT_EQ(offers[0].resources, R("cpus:2;mem:1024") + disk);
  ASSERT_TRUE(
      allocator_->updateAllocation("sharing", "agent", "web", offers[0].resources, {{disk, volume}})
          .ok());
  EXPECT_EQ(metric("resources/disk/offered_or_allocated"), 0);
  giveBack(offers[0], R("cpus:2;mem:1024") + volume, 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + volume);

  ASSERT_TRUE(
      allocator_->updateAllocation("sharing", "agent", "web", offers[0].resources, {{volume, disk}})
          .ok());
  EXPECT_EQ(metric("resources/disk/offered_or_allocated"), 64);
  giveBack(offers[0], R("cpus:2;mem:1024") + disk, 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + disk);
  // A volume the agent no longer has is not in any offer of it.
  EXPECT_EQ(allocator_
                ->updateAllocation("sharing", "agent", "web", offers[0].resources + volume,
                                   {{volume, disk}})
                .code(),
            StatusCode::kFailedPrecondition);
}

// The operator's DESTROY_VOLUMES of a shared volume an offer holds (the master rescinds that
// offer): the allocator takes it whoever was offered it, and the rescinded offer comes back.
TEST_F(SharedVolumesTest, TheOperatorDestroysASharedVolumeAnOfferHolds) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  addAgentWith("agent", R("cpus:2;mem:1024") + volume);
  addSharingFramework("sharing", "web");
  std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  ASSERT_TRUE(allocator_->updateAvailable("agent", {{volume, diskUnder(volume)}}).ok());
  giveBack(offers[0], offers[0].resources, 0);
  offers = cycle();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(offers[0].resources, R("cpus:2;mem:1024") + diskUnder(volume));
}

// Stage 3 lends idle reservations; a shared volume is never lent, even when nobody uses it.
TEST_F(SharedVolumesTest, AnIdleSharedVolumeIsNotLent) {
  initialize();
  const Resources volume = sharedVolume("v1", 64);
  ASSERT_TRUE(allocator_->addFramework("owner", framework({"web"}), {}, /*active=*/false, {}).ok());
  addFramework("borrower", {"batch"}, /*revocable=*/true);
  addAgentWith("agent", R("cpus:2;mem:1024;cpus(web):2") + volume);
  const std::deque<RecordedOffer> offers = cycle();
  ASSERT_EQ(offers.size(), 2u);
  Resources offered;
  for (const RecordedOffer& offer : offers) {
    EXPECT_EQ(offer.framework, "borrower");
    offered += offer.resources;
  }
  EXPECT_EQ(offered.scalar(kinds::kDisk), Scalar());
  EXPECT_EQ(offered.scalar(kinds::kCpus), Scalar::fromUnits(4));
}

}  // namespace
}  // namespace harvest
