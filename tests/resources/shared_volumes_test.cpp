// Shared persistent volumes (SHARED_RESOURCES) in the resource model: how they come in from
// protos (Mesos's validation), and the rule that a shared volume is one thing however many
// hold it.
#include <gtest/gtest.h>

#include "resources/parse.h"
#include "resources/proto/convert.h"
#include "resources/resources.h"
#include "testing/volumes/volume_protos.h"

namespace harvest {
namespace {

using testing_volumes::volumeProto;

v1::Resource sharedProto(const std::string& id, double size) {
  return volumeProto(id, size, true);
}

Resources shared(const std::string& id, double size) {
  return testing_volumes::volumeResources(id, size, true);
}

TEST(SharedVolumesTest, ASharedVolumeIsKeyedSharedAndWrittenBackShared) {
  const Resources volume = shared("v1", 64);
  ASSERT_EQ(volume.scalars().size(), 1u);
  EXPECT_TRUE(volume.scalars()[0].key.shared);
  EXPECT_NE(volume.scalars()[0].key.volume, kNoVolume);
  EXPECT_EQ(volume.shared(), volume);
  EXPECT_TRUE(volume.nonShared().empty());
  const ResourceProtos back = toProto(volume);
  ASSERT_EQ(back.size(), 1);
  EXPECT_TRUE(back[0].has_shared());
  EXPECT_EQ(back[0].disk().persistence().id(), "v1");
  // The same volume without `shared` is another resource.
  EXPECT_NE(testing_volumes::volumeResources("v1", 64), volume);
}

// Mesos's rules and messages: only persistent volumes can be shared, never revocably.
TEST(SharedVolumesTest, OnlyPersistentVolumesCanBeShared) {
  v1::Resource cpus;
  cpus.set_name("cpus");
  cpus.set_type(v1::Value::SCALAR);
  cpus.mutable_scalar()->set_value(1);
  cpus.mutable_shared();
  EXPECT_EQ(fromProto(cpus).message(), "Resource cpus cannot be shared");

  v1::Resource plainDisk = sharedProto("v1", 64);
  plainDisk.clear_disk();
  EXPECT_EQ(fromProto(plainDisk).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fromProto(plainDisk).message(), "Only persistent volumes can be shared");

  v1::Resource revocable = sharedProto("v1", 64);
  revocable.mutable_revocable();
  EXPECT_EQ(fromProto(revocable).message(),
            "Persistent volumes cannot be created from revocable resources");
}

// What lets several tasks' resources be summed into an agent's used resources: the volume is
// counted once, whoever holds it.
TEST(SharedVolumesTest, ASharedVolumeIsHeldOnceHoweverManyAddIt) {
  const Resources volume = shared("v1", 64);
  const Resources task = parseResources("cpus:1;mem:128").value() + volume;
  Resources used = task + task;
  EXPECT_EQ(used, parseResources("cpus:2;mem:256").value() + volume);
  EXPECT_EQ(used.scalar(kinds::kDisk), Scalar::fromUnits(64));
  EXPECT_TRUE(used.contains(task + task));

  // Subtracting it removes it; what remains of the rest is exact.
  used -= task;
  EXPECT_EQ(used, parseResources("cpus:1;mem:128").value());

  // Held whole or not at all: a part of the volume is not in it, nor a larger one.
  Resources offered = parseResources("cpus:4").value() + volume;
  EXPECT_TRUE(offered.contains(volume));
  EXPECT_FALSE(offered.contains(shared("v1", 32)));
  EXPECT_FALSE(offered.contains(shared("v1", 128)));
  EXPECT_FALSE(offered.contains(shared("v2", 64)));
  EXPECT_NE(volume.toString().find("<SHARED>:64"), std::string::npos) << volume;
}

// The agent books what the master converted as the static resources under it (the master
// keeps dynamic reservations and volumes), and a shared volume not at all.
TEST(SharedVolumesTest, TheAgentFormDropsDynamicStateAndSharedVolumes) {
  const Resources dynamicVolume = testing_volumes::volumeResources("v2", 100);
  EXPECT_EQ(dynamicVolume.agentForm(), parseResources("disk:100").value());
  EXPECT_EQ((parseResources("cpus(web):2;mem:64").value() + shared("v1", 64)).agentForm(),
            parseResources("cpus(web):2;mem:64").value());

  // A dynamic reservation refining a static one keeps the static one.
  v1::Resource refined;
  refined.set_name("cpus");
  refined.set_type(v1::Value::SCALAR);
  refined.mutable_scalar()->set_value(3);
  auto* outer = refined.add_reservations();
  outer->set_type(v1::Resource::ReservationInfo::STATIC);
  outer->set_role("web");
  auto* inner = refined.add_reservations();
  inner->set_type(v1::Resource::ReservationInfo::DYNAMIC);
  inner->set_role("web/api");
  EXPECT_EQ(fromProto(refined).value().agentForm(), parseResources("cpus(web):3").value());
}

}  // namespace
}  // namespace harvest
