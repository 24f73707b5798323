#include "resources/resources.h"

#include <gtest/gtest.h>

#include "resources/parse.h"
#include "resources/proto/convert.h"

namespace harvest {
namespace {

Resources parse(std::string_view text) {
  Result<Resources> parsed = parseResources(text);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return parsed.ok() ? *parsed : Resources();
}

TEST(ResourcesTest, ParsesMesosStrings) {
  const Resources r =
      parse("cpus:2;mem:1024;ports:[31000-32000];cpus(role1):1;disk(role1,principal):10");
  EXPECT_EQ(r.scalar(kinds::kCpus), Scalar::fromUnits(3));
  EXPECT_EQ(r.unreserved().scalar(kinds::kCpus), Scalar::fromUnits(2));
  EXPECT_EQ(r.reserved().toString(), "cpus(role1):1;disk(role1,principal):10");
  EXPECT_EQ(r.quantities().get(kinds::kPorts), Scalar::fromUnits(1001));
  EXPECT_EQ(r.toString(),
            "cpus:2;cpus(role1):1;mem:1024;disk(role1,principal):10;ports:[31000-32000]");
}

TEST(ResourcesTest, QuantitiesSumEveryPoolOfAKindAcrossScalarsRangesAndSets) {
  const Resources r = parse(
      "cpus:2;cpus(r1):1.5;mem:1024;mem(r1,alice):512;ports:[31000-31009,32000-32004];"
      "ports(r1):[1-2];zones:{a,b,c};zones(r1):{d}");
  const Quantities q = r.quantities();
  EXPECT_EQ(q.get(kinds::kCpus), Scalar::fromMilli(3500));
  EXPECT_EQ(q.get(kinds::kMem), Scalar::fromUnits(1536));
  EXPECT_EQ(q.get(kinds::kPorts), Scalar::fromUnits(17));
  KindId zones = 0;
  ASSERT_TRUE(kinds::intern("zones", &zones));
  EXPECT_EQ(q.get(zones), Scalar::fromUnits(4));
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(Resources().quantities(), Quantities());
}

TEST(ResourcesTest, QuantitiesKeepKindOrderWhenARangeKindSortsBeforeAScalarKind) {
  // ports (id 3) sorts before gpus (id 4), though ranges are summed after scalars.
  const Quantities q = parse("gpus:1;cpus:2;ports:[1-10]").quantities();
  EXPECT_EQ(q, (Quantities{{kinds::kCpus, Scalar::fromUnits(2)},
                           {kinds::kPorts, Scalar::fromUnits(10)},
                           {kinds::kGpus, Scalar::fromUnits(1)}}));
  EXPECT_EQ(q.toString(), "cpus:2;ports:10;gpus:1");
}

TEST(ResourcesTest, ReservationKinds) {
  const Resources r = parse("cpus(role1):1;disk(role1,alice):10");
  ASSERT_EQ(r.scalars().size(), 2u);
  const Pool& staticPool = pools::get(r.scalars()[0].key.pool);
  const Pool& dynamicPool = pools::get(r.scalars()[1].key.pool);
  EXPECT_EQ(staticPool.stack.at(0).type, Reservation::Type::kStatic);
  EXPECT_EQ(dynamicPool.stack.at(0).type, Reservation::Type::kDynamic);
  EXPECT_EQ(dynamicPool.stack.at(0).principal, "alice");
  EXPECT_EQ(dynamicPool.role(), "role1");
}

TEST(ResourcesTest, DefaultRoleReservesUnqualifiedEntries) {
  Result<Resources> r = parseResources("cpus:1;mem(*):5", "web");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->toString(), "cpus(web):1;mem:5");
}

TEST(ResourcesTest, ArithmeticAndContains) {
  const Resources total = parse("cpus:4;mem:4096;ports:[31000-31009]");
  const Resources used = parse("cpus:1.5;mem:1000;ports:[31002-31003]");
  const Resources left = total - used;
  EXPECT_EQ(left, parse("cpus:2.5;mem:3096;ports:[31000-31001,31004-31009]"));
  EXPECT_EQ(left + used, total);
  EXPECT_TRUE(total.contains(used));
  EXPECT_FALSE(used.contains(total));
  EXPECT_FALSE(left.contains(used));
  // Reserved cpus are not interchangeable with unreserved ones.
  EXPECT_FALSE(parse("cpus:4").contains(parse("cpus(role1):1")));
}

TEST(ResourcesTest, EraseIfLeavesWhatSubtractingTheFilteredEntriesLeaves) {
  // More scalar and range entries than are held inline, and a set, in several pools.
  const Resources all = parse(
      "cpus:4;mem:4096;disk:100;gpus:1;cpus(a):2;mem(a):512;disk(b):7;ports:[31000-31009];"
      "ports(a):[32000-32009];ports(b):[33000-33001];gpu_ids:{x,y};gpu_ids(a):{z}");
  const auto reserved = [](const ResourceKey& key) { return key.reserved(); };
  Resources rest = all;
  rest.eraseIf(reserved);
  EXPECT_EQ(rest, parse("cpus:4;mem:4096;disk:100;gpus:1;ports:[31000-31009];gpu_ids:{x,y}"));
  EXPECT_EQ(rest, all - all.filter(reserved));
  EXPECT_EQ(rest + all.filter(reserved), all);

  Resources untouched = all;
  untouched.eraseIf([](const ResourceKey&) { return false; });
  EXPECT_EQ(untouched, all);
  Resources none = all;
  none.eraseIf([](const ResourceKey&) { return true; });
  EXPECT_TRUE(none.empty());
}

TEST(ResourcesTest, DecimalAmountsAreExact) {
  EXPECT_EQ(parse("cpus:0.1") + parse("cpus:0.2"), parse("cpus:0.3"));
  EXPECT_EQ(parse("cpus:0.3") - parse("cpus:0.1") - parse("cpus:0.2"), Resources());
}

TEST(ResourcesTest, SubtractingMoreThanHeldRemovesTheEntry) {
  Resources r = parse("cpus:1;mem:10");
  r -= parse("cpus:2");
  EXPECT_EQ(r, parse("mem:10"));
}

TEST(ResourcesTest, Sets) {
  const Resources r = parse("gpu_ids:{a,b,c}");
  EXPECT_EQ(r - parse("gpu_ids:{b}"), parse("gpu_ids:{a,c}"));
  EXPECT_TRUE(r.contains(parse("gpu_ids:{c,a}")));
  EXPECT_FALSE(r.contains(parse("gpu_ids:{d}")));
}

TEST(ResourcesTest, LentAsRevocableDropsTheReservation) {
  const Resources idle = parse("cpus(role1):8;mem(role1):8192");
  const Resources lent = idle.lentAs(Revocability::kNonThrottleable);
  EXPECT_EQ(lent.toString(), "cpus{REV}:8;mem{REV}:8192");
  EXPECT_EQ(lent.revocable(), lent);
  EXPECT_TRUE(lent.regular().empty());
  EXPECT_EQ(lent.quantities(), idle.quantities());
  EXPECT_TRUE(lent.ofClass(Revocability::kThrottleable).empty());
}

// Each class of bad input is refused with a message naming the offending token.
struct BadInput {
  const char* text;
  const char* message;
};

class BadResourceStringTest : public testing::TestWithParam<BadInput> {};

TEST_P(BadResourceStringTest, IsRefusedNamingTheToken) {
  Result<Resources> parsed = parseResources(GetParam().text);
  ASSERT_FALSE(parsed.ok()) << GetParam().text;
  EXPECT_EQ(parsed.message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    AllClasses, BadResourceStringTest,
    testing::Values(
        BadInput{"cpus:-1", "negative amount in 'cpus:-1'"},
        BadInput{"cpus:nan", "bad amount 'nan' in 'cpus:nan'"},
        BadInput{"cpus:1e400", "non-finite amount in 'cpus:1e400'"},
        BadInput{"mem:1e300", "amount too large in 'mem:1e300'"},
        BadInput{"cpus:0.0001", "amount below the 0.001 precision in 'cpus:0.0001'"},
        BadInput{"cpus:abc", "bad amount 'abc' in 'cpus:abc'"},
        BadInput{"cpus", "expected 'name:value' in 'cpus'"},
        BadInput{"cpus:", "missing value in 'cpus:'"},
        BadInput{"ports:[5-3]", "reversed range 5-3 in 'ports:[5-3]'"},
        BadInput{"ports:[1-5", "malformed ranges in 'ports:[1-5': expected '[a-b, ...]'"},
        BadInput{"ports:[1-x]", "bad range bound 'x' in 'ports:[1-x]'"},
        BadInput{"ports:[7]", "malformed range '7' in 'ports:[7]': expected 'begin-end'"},
        BadInput{"ports:[]", "empty ranges in 'ports:[]'"},
        BadInput{"ports:[1-5,3-8]", "overlapping range 3-8 in 'ports:[1-5,3-8]'"},
        BadInput{"ports:[1-5];ports:[4-6]", "overlapping ranges at 'ports:[4-6]'"},
        BadInput{"ports:[1-99999999999999]", "range bound too large in 'ports:[1-99999999999999]'"},
        BadInput{"s:{a,a}", "duplicate set item 'a' in 's:{a,a}'"},
        BadInput{"s:{a,}", "empty set item in 's:{a,}'"},
        BadInput{"cp us:1", "bad resource name 'cp us' in 'cp us:1'"},
        BadInput{"cpus(a//b):1", "role 'a//b' has an empty component ('//') in 'cpus(a//b):1'"},
        BadInput{"cpus(/a):1", "role '/a' must not start or end with '/' in 'cpus(/a):1'"},
        BadInput{"cpus(a b):1",
                 "role 'a b' contains whitespace, a backslash or a control character in "
                 "'cpus(a b):1'"},
        BadInput{"cpus(role1:1", "malformed reservation in 'cpus(role1:1'"},
        BadInput{"cpus(*,p):1", "a principal needs a reserved role in 'cpus(*,p):1'"},
        BadInput{"cpus:1;cpus:[1-2]",
                 "resource 'cpus' used with two value types at 'cpus:[1-2]'"}));

TEST(ResourcesProtoTest, RoundTrip) {
  const Resources r = parse(
      "cpus:2;mem:1024;ports:[31000-32000];cpus(role1):1;disk(role1,principal):10;zones:{a,b}");
  ResourceProtos protos = toProto(r, "role1");
  ASSERT_EQ(protos.size(), 6);
  EXPECT_EQ(protos[0].allocation_info().role(), "role1");
  Result<Resources> back = fromProto(protos);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, r);
}

TEST(ResourcesProtoTest, RevocableClassesRoundTrip) {
  Resources r;
  r.addScalar({kinds::kCpus, Revocability::kThrottleable}, Scalar::fromUnits(2));
  r.addScalar({kinds::kCpus, Revocability::kNonThrottleable}, Scalar::fromUnits(3));
  ResourceProtos protos = toProto(r);
  ASSERT_EQ(protos.size(), 2);
  EXPECT_TRUE(protos[0].has_revocable());
  EXPECT_FALSE(protos[0].revocable().has_throttle_info());
  EXPECT_TRUE(protos[1].revocable().has_throttle_info());
  EXPECT_EQ(*fromProto(protos), r);
}

TEST(ResourcesProtoTest, ReadsLegacyRoleField) {
  v1::Resource proto;
  proto.set_name("cpus");
  proto.set_type(v1::Value::SCALAR);
  proto.mutable_scalar()->set_value(4);
  proto.set_role("legacy");
  Result<Resources> r = fromProto(proto);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->toString(), "cpus(legacy):4");
}

TEST(ResourcesProtoTest, TheOldReservationFormIsUpgradedToTheStack) {
  v1::Resource cpus;
  cpus.set_name("cpus");
  cpus.set_type(v1::Value::SCALAR);
  cpus.mutable_scalar()->set_value(2);
  v1::Resource unreserved = cpus;
  unreserved.set_role("*");
  EXPECT_EQ(withReservationsStack(unreserved).ShortDebugString(), unreserved.ShortDebugString());

  v1::Resource staticRole = cpus;
  staticRole.set_role("web");
  EXPECT_EQ(withReservationsStack(staticRole).ShortDebugString(),
            R"(name: "cpus" type: SCALAR scalar { value: 2 } )"
            R"(reservations { role: "web" type: STATIC })");

  v1::Resource dynamic = cpus;
  dynamic.set_role("web");
  dynamic.mutable_reservation()->set_principal("ops");
  ResourceProtos both;
  *both.Add() = staticRole;
  *both.Add() = dynamic;
  const ResourceProtos upgraded = withReservationsStack(both);
  ASSERT_EQ(upgraded.size(), 2);
  EXPECT_EQ(upgraded[1].ShortDebugString(),
            R"(name: "cpus" type: SCALAR scalar { value: 2 } )"
            R"(reservations { principal: "ops" role: "web" type: DYNAMIC })");
  // Already in the new form: unchanged.
  EXPECT_EQ(withReservationsStack(upgraded[1]).ShortDebugString(), upgraded[1].ShortDebugString());
}

TEST(ResourcesProtoTest, RefinedReservationStack) {
  v1::Resource proto;
  proto.set_name("mem");
  proto.set_type(v1::Value::SCALAR);
  proto.mutable_scalar()->set_value(64);
  auto* outer = proto.add_reservations();
  outer->set_type(v1::Resource::ReservationInfo::STATIC);
  outer->set_role("a");
  auto* inner = proto.add_reservations();
  inner->set_type(v1::Resource::ReservationInfo::DYNAMIC);
  inner->set_role("a/b");
  inner->set_principal("ops");
  Result<Resources> r = fromProto(proto);
  ASSERT_TRUE(r.ok()) << r.message();
  const PoolId pool = r->scalars()[0].key.pool;
  EXPECT_EQ(pools::get(pool).role(), "a/b");
  EXPECT_EQ(pools::get(pools::parent(pool)).role(), "a");
  EXPECT_EQ(pools::parent(pools::parent(pool)), kUnreservedPool);
}

TEST(ResourcesProtoTest, RejectsBadProtos) {
  v1::Resource proto;
  proto.set_name("cpus");
  proto.set_type(v1::Value::SCALAR);
  EXPECT_EQ(fromProto(proto).message(), "scalar value missing in resource 'cpus'");
  proto.mutable_scalar()->set_value(-2);
  EXPECT_EQ(fromProto(proto).message(), "negative amount in resource 'cpus'");
  proto.mutable_scalar()->set_value(2);
  auto* bad = proto.add_reservations();
  bad->set_role("x");
  auto* notRefining = proto.add_reservations();
  notRefining->set_role("y");
  EXPECT_EQ(fromProto(proto).message(),
            "reservation to 'y' does not refine the reservation below it to 'x' in resource "
            "'cpus'");
  v1::Resource ports;
  ports.set_name("ports");
  ports.set_type(v1::Value::RANGES);
  auto* range = ports.mutable_ranges()->add_range();
  range->set_begin(10);
  range->set_end(1);
  EXPECT_EQ(fromProto(ports).message(), "reversed range 10-1 in resource 'ports'");
}

}  // namespace
}  // namespace harvest
