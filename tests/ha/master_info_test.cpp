#include "ha/master_info.h"

#include <gtest/gtest.h>

namespace harvest::ha {
namespace {

TEST(MasterInfo, JsonHasMesosShapeAndIpEncoding) {
  auto info = makeMasterInfo("m-1", "10.0.6.183", 5050, "master1", "0.1.0");
  ASSERT_TRUE(info.ok()) << info.message();
  // 10.0.6.183 is 3070623754 in the ip field of Mesos's published MasterInfo.
  EXPECT_EQ(masterInfoJson(*info),
            R"({"id":"m-1","ip":3070623754,"port":5050,"pid":"master@10.0.6.183:5050",)"
            R"("hostname":"master1","version":"0.1.0",)"
            R"("address":{"hostname":"master1","ip":"10.0.6.183","port":5050}})");
}

TEST(MasterInfo, ParsesWhatMesosPublishes) {
  // Field order and an unknown field as a newer Mesos writes them.
  auto info = parseMasterInfoJson(
      R"({"address":{"hostname":"h","ip":"127.0.0.1","port":5051},"hostname":"h",)"
      R"("id":"x","ip":16777343,"pid":"master@127.0.0.1:5051","port":5051,"version":"1.11.0",)"
      R"("domain":{}})");
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_EQ(info->id(), "x");
  EXPECT_EQ(info->ip(), 16777343u);
  EXPECT_EQ(info->port(), 5051u);
  EXPECT_EQ(info->address().ip(), "127.0.0.1");
  EXPECT_EQ(info->address().port(), 5051);
}

TEST(MasterInfo, RefusesWhatIsNotOne) {
  EXPECT_EQ(makeMasterInfo("m", "localhost", 5050, "h", "v").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parseMasterInfoJson("{").code(), StatusCode::kCorruption);
  EXPECT_EQ(parseMasterInfoJson(R"({"port":5050})").code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace harvest::ha
