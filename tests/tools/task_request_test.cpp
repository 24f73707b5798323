// harvest-execute's request: the resource string it reads, and the part of an offer it takes
// (unreserved, reserved to a role, revocable or not; the offer's own Resource kept).
#include "tools/execute/task_request.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace harvest::execute {
namespace {

v1::Resource scalar(const std::string& name, double value, const std::string& role = "*",
                    bool revocable = false) {
  v1::Resource resource;
  resource.set_name(name);
  resource.set_type(v1::Value::SCALAR);
  resource.mutable_scalar()->set_value(value);
  if (role != "*") {
    v1::Resource::ReservationInfo& reservation = *resource.add_reservations();
    reservation.set_type(v1::Resource::ReservationInfo::STATIC);
    reservation.set_role(role);
  }
  if (revocable) resource.mutable_revocable();
  resource.mutable_allocation_info()->set_role("web");
  return resource;
}

v1::Offer offerOf(const std::vector<v1::Resource>& resources) {
  v1::Offer offer;
  for (const v1::Resource& resource : resources) *offer.add_resources() = resource;
  return offer;
}

std::string amount(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string described(const std::optional<std::vector<v1::Resource>>& taken) {
  if (!taken) return "none";
  std::string out;
  for (const v1::Resource& resource : *taken) {
    const std::string role = resource.reservations_size() > 0
                                 ? "(" + resource.reservations(0).role() + ")"
                                 : (resource.role() == "*" ? "" : "(" + resource.role() + ")");
    out += (out.empty() ? "" : ";") + resource.name() + role +
           (resource.has_revocable() ? "{REV}" : "") + ":" + amount(resource.scalar().value()) +
           (resource.allocation_info().role() == "web" ? "" : "!");
  }
  return out;
}

TEST(TaskRequestTest, ParsesScalarsWithRoles) {
  Result<TaskRequest> request = parseTaskRequest("cpus:1.5; mem(analytics):256", true);
  ASSERT_TRUE(request.ok()) << request.message();
  ASSERT_EQ(request->scalars.size(), 2u);
  EXPECT_EQ(request->scalars[0].name, "cpus");
  EXPECT_EQ(request->scalars[0].role, "*");
  EXPECT_EQ(request->scalars[0].amount, 1.5);
  EXPECT_EQ(request->scalars[1].name, "mem");
  EXPECT_EQ(request->scalars[1].role, "analytics");
  EXPECT_EQ(request->scalars[1].amount, 256);
  EXPECT_TRUE(request->revocable);
}

TEST(TaskRequestTest, RefusesWhatIsNotAScalarRequest) {
  EXPECT_EQ(parseTaskRequest("cpus", false).message(), "'cpus' is not NAME[(ROLE)]:AMOUNT");
  EXPECT_EQ(parseTaskRequest("cpus:0", false).message(), "'cpus:0' needs a positive amount");
  EXPECT_EQ(parseTaskRequest("cpus:x", false).message(), "'cpus:x' needs a positive amount");
  EXPECT_EQ(parseTaskRequest("cpus(web:1", false).message(), "'cpus(web:1' has a malformed role");
  EXPECT_EQ(parseTaskRequest(":1", false).message(), "':1' names no resource");
  EXPECT_EQ(parseTaskRequest("cpus:1;cpus:2", false).message(), "'cpus:2' is named twice");
  EXPECT_EQ(parseTaskRequest(" ; ", false).message(), "no resources are requested");
}

TEST(TaskRequestTest, TakesUnreservedRegularResourcesOnly) {
  const v1::Offer offer = offerOf({scalar("cpus", 4), scalar("cpus", 2, "web"),
                                   scalar("cpus", 8, "*", true), scalar("mem", 512)});
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus:1;mem:128", false))), "cpus:1;mem:128");
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus:5", false))), "none");
}

TEST(TaskRequestTest, TakesReservedResourcesOfTheRoleInEitherFormat) {
  v1::Resource legacy = scalar("mem", 256);
  legacy.set_role("web");  // As a master writes it for frameworks without refinement.
  const v1::Offer offer = offerOf({scalar("cpus", 4), scalar("cpus", 2, "web"), legacy});
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus(web):2;mem(web):100", false))),
            "cpus(web):2;mem(web):100");
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus(other):1", false))), "none");
}

TEST(TaskRequestTest, RevocableTakesRevocableResourcesAcrossPieces) {
  const v1::Offer offer = offerOf({scalar("cpus", 4), scalar("cpus", 1, "*", true),
                                   scalar("cpus", 2, "*", true), scalar("mem", 512, "*", true)});
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus:2.5;mem:64", true))),
            "cpus{REV}:1;cpus{REV}:1.5;mem{REV}:64");
  EXPECT_EQ(described(take(offer, *parseTaskRequest("cpus:4", true))), "none");
}

}  // namespace
}  // namespace harvest::execute
