// Base64: RFC 4648 vectors, unpadded input, every byte value, malformed input.
#include "common/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace harvest {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64Encode(plain), encoded);
    Result<std::string> decoded = base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.message();
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, UnpaddedInputIsAccepted) {
  EXPECT_EQ(*base64Decode("Zg"), "f");
  EXPECT_EQ(*base64Decode("Zm8"), "fo");
  EXPECT_EQ(*base64Decode("Zm9vYmE"), "fooba");
}

TEST(Base64Test, AllByteValuesRoundTrip) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (size_t length = 0; length <= bytes.size(); length += 37) {
    std::string input = bytes.substr(0, length);
    Result<std::string> decoded = base64Decode(base64Encode(input));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, input);
  }
  EXPECT_EQ(base64Encode("\xff\xfe\xfd"), "//79");
}

TEST(Base64Test, MalformedInputIsRefused) {
  for (const char* bad :
       {"Z", "Zg=", "Zm9v!", "Zh==", "Zm9=", "=Zg=", "Zg==Zg==", "Zm 9v", "Zg===", "Zm9vY"}) {
    EXPECT_FALSE(base64Decode(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace harvest
