// FrameworkInfo.offer_filters over the scheduler API: SUBSCRIBE and UPDATE_FRAMEWORK carry
// them, /master/state lists them, and amounts Mesos's master refuses are refused with its
// words (UPDATE_FRAMEWORK: 400; SUBSCRIBE: an ERROR event on the stream, as Mesos answers an
// invalid FrameworkInfo).
#include <google/protobuf/struct.pb.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "testing/fake_agent.h"
#include "testing/framework_client.h"
#include "testing/master_thread.h"
#include "testing/operator_client.h"

namespace harvest::master {
namespace {

using namespace testkit;  // NOLINT: the fakes are this test's vocabulary.

// Long enough for several allocation cycles (every 50 ms).
constexpr Duration kNoOfferWindow = Duration::milliseconds(400);

v1::FrameworkInfo withCpusMinimum(v1::FrameworkInfo info, const std::string& role, double cpus) {
  auto* minimum = (*info.mutable_offer_filters())[role].mutable_min_allocatable_resources();
  (*minimum->add_quantities()->mutable_quantities())["cpus"].set_value(cpus);
  return info;
}

Call updateFrameworkCall(const FrameworkClient& framework, v1::FrameworkInfo info) {
  Call update;
  update.set_type(Call::UPDATE_FRAMEWORK);
  info.mutable_id()->set_value(framework.id());
  *update.mutable_update_framework()->mutable_framework_info() = std::move(info);
  return update;
}

TEST(OfferFiltersApiTest, SubscribeWithAFilterIsListedAndUpdateFrameworkReplacesIt) {
  MasterThread master;
  FakeAgent agent(master.port(), "a1", "cpus:2;mem:1024");
  ASSERT_EQ(agent.registerAgent(), 200);
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(withCpusMinimum(frameworkInfo("web"), "web", 4)), 200);
  ASSERT_EQ(framework.firstEvent().type(), Event::SUBSCRIBED);
  EXPECT_TRUE(framework.offers(kNoOfferWindow).empty());

  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  const Struct filters = object(*listed, "offer_filters");
  ASSERT_EQ(filters.fields_size(), 1);
  const Struct minimum = object(object(filters, "web"), "min_allocatable_resources");
  ASSERT_EQ(minimum.fields().count("quantities"), 1u);
  const auto& alternatives = minimum.fields().at("quantities").list_value();
  ASSERT_EQ(alternatives.values_size(), 1);
  const Struct quantities = object(alternatives.values(0).struct_value(), "quantities");
  ASSERT_EQ(quantities.fields_size(), 1);
  EXPECT_EQ(number(object(quantities, "cpus"), "value"), 4);

  const http::ClientResponse updated =
      framework.call(updateFrameworkCall(framework, frameworkInfo("web")));
  ASSERT_EQ(updated.status, 200) << updated.body;
  const std::vector<v1::Offer> offers = framework.offers();
  ASSERT_EQ(offers.size(), 1u);
  EXPECT_EQ(resourcesOf(offers[0].resources()), R("cpus:2;mem:1024"));
  listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->fields().count("offer_filters"), 0u);
}

TEST(OfferFiltersApiTest, UpdateFrameworkWithANegativeAmountIsABadRequest) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kProtobuf);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  const http::ClientResponse refused = framework.call(
      updateFrameworkCall(framework, withCpusMinimum(frameworkInfo("web"), "web", -1)));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body, "Invalid resource quantity for 'cpus': Negative values not supported");
  // Nothing changed: the framework still has no filters.
  std::optional<Struct> listed = frameworkInState(master.port(), framework.id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->fields().count("offer_filters"), 0u);
}

TEST(OfferFiltersApiTest, UpdateFrameworkWithAnEmptySetOfQuantitiesIsABadRequest) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(frameworkInfo("web")), 200);
  v1::FrameworkInfo info = frameworkInfo("web");
  (*info.mutable_offer_filters())["web"].mutable_min_allocatable_resources()->add_quantities();
  const http::ClientResponse refused = framework.call(updateFrameworkCall(framework, info));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body, "Resource quantities must contain at least one quantity");
}

TEST(OfferFiltersApiTest, SubscribeWithAnInfiniteAmountGetsAnError) {
  MasterThread master;
  FrameworkClient framework(master.port(), Format::kJson);
  ASSERT_EQ(framework.subscribe(withCpusMinimum(frameworkInfo("web"), "web",
                                                std::numeric_limits<double>::infinity())),
            200);
  ASSERT_EQ(framework.firstEvent().type(), Event::ERROR);
  const std::string& message = framework.firstEvent().error().message();
  EXPECT_TRUE(
      message.ends_with(": Invalid resource quantity for 'cpus': Infinite values not "
                        "supported"))
      << message;
  EXPECT_TRUE(framework.streamEnds(kTimeout));
}

}  // namespace
}  // namespace harvest::master
