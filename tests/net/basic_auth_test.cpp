// Basic authentication: the Authorization header, and credentials
// files in both of Mesos's formats, good and bad.
#include "net/basic_auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/base64.h"

namespace harvest::http {
namespace {

TEST(HttpBasicAuthTest, ParsesTheAuthorizationHeader) {
  Result<Credential> credential = parseBasicAuthorization("Basic " + base64Encode("fw:pa:ss"));
  ASSERT_TRUE(credential.ok()) << credential.message();
  EXPECT_EQ(credential->principal, "fw");
  EXPECT_EQ(credential->secret, "pa:ss");  // Only the first ':' separates.
  EXPECT_EQ(parseBasicAuthorization("basic  " + base64Encode("a:")).value().secret, "");
  EXPECT_EQ(basicAuthorization({"user", "secret"}), "Basic dXNlcjpzZWNyZXQ=");
  EXPECT_FALSE(parseBasicAuthorization("Bearer abc").ok());
  EXPECT_FALSE(parseBasicAuthorization("Basic").ok());
  EXPECT_FALSE(parseBasicAuthorization("Basic ").ok());
  EXPECT_FALSE(parseBasicAuthorization("Basic !!!!").ok());
  EXPECT_FALSE(parseBasicAuthorization("Basic " + base64Encode("nocolon")).ok());
}

TEST(HttpBasicAuthTest, ConstantTimeEquals) {
  EXPECT_TRUE(constantTimeEquals("secret", "secret"));
  EXPECT_TRUE(constantTimeEquals("", ""));
  EXPECT_FALSE(constantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(constantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(constantTimeEquals("secret", "secre"));
  EXPECT_FALSE(constantTimeEquals("", "x"));
  EXPECT_FALSE(constantTimeEquals("x", ""));
}

TEST(HttpCredentialsTest, JsonFormat) {
  Result<CredentialStore> store = CredentialStore::parse(R"({
    "credentials": [
      {"principal": "framework-a", "secret": "s3cr3t"},
      {"principal": "agent", "secret": "with \"quotes\" and \u00e9", "extra": [1, 2.5e3, null]}
    ]
  })");
  ASSERT_TRUE(store.ok()) << store.message();
  EXPECT_EQ(store->size(), 2u);
  EXPECT_TRUE(store->authenticate("framework-a", "s3cr3t"));
  EXPECT_FALSE(store->authenticate("framework-a", "s3cr3T"));
  EXPECT_FALSE(store->authenticate("nobody", "s3cr3t"));
  EXPECT_TRUE(store->authenticate("agent", "with \"quotes\" and \xc3\xa9"));
  Result<std::string> principal =
      store->authenticateHeader(basicAuthorization({"framework-a", "s3cr3t"}));
  ASSERT_TRUE(principal.ok()) << principal.message();
  EXPECT_EQ(*principal, "framework-a");
  EXPECT_EQ(store->authenticateHeader(basicAuthorization({"framework-a", "x"})).code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(store->authenticateHeader("Digest x").code(), StatusCode::kInvalidArgument);
}

TEST(HttpCredentialsTest, TextFormat) {
  Result<CredentialStore> store = CredentialStore::parse("alice secret1\n\n  bob\tsecret2  \n");
  ASSERT_TRUE(store.ok()) << store.message();
  EXPECT_EQ(store->size(), 2u);
  EXPECT_TRUE(store->authenticate("alice", "secret1"));
  EXPECT_TRUE(store->authenticate("bob", "secret2"));
  EXPECT_TRUE(CredentialStore::parse("").value().empty());
}

void expectParseError(const std::string& text, const std::string& message) {
  Result<CredentialStore> store = CredentialStore::parse(text, "creds.json");
  ASSERT_FALSE(store.ok()) << text;
  EXPECT_EQ(store.message(), message);
}

TEST(HttpCredentialsTest, BadFilesNameTheLineAndField) {
  expectParseError("{\"credentials\": [\n  {\"principal\": \"a\"}\n]}",
                   "creds.json, line 2: credentials[0] has no \"secret\"");
  expectParseError(
      "{\"credentials\": [\n {\"principal\": \"a\", \"secret\": \"b\"},\n"
      " {\"principal\": 7, \"secret\": \"b\"}]}",
      "creds.json, line 3: credentials[1].principal must be a string, found a "
      "number");
  expectParseError("{\"credentials\": {}}",
                   "creds.json, line 1: \"credentials\" must be an array, found an object");
  expectParseError("{\"other\": []}", "creds.json, line 1: no \"credentials\" field");
  expectParseError("{\"credentials\": [\n\"x\"]}",
                   "creds.json, line 2: credentials[0] must be an object, found a string");
  expectParseError("{\"credentials\": [\n  {\"principal\" \"a\"}]}",
                   "creds.json, line 2, column 16: expected ':' after member name");
  expectParseError("{\"credentials\": [\n  {\"principal\": \"a\", \"secret\": \"b\"}\n",
                   "creds.json, line 3, column 1: expected ',' or ']'");
  expectParseError("{\"credentials\": []} trailing",
                   "creds.json, line 1, column 21: unexpected text after the JSON object");
  expectParseError(
      "{\"credentials\": [{\"principal\": \"a\", \"secret\": \"b\"},"
      "{\"principal\": \"a\", \"secret\": \"c\"}]}",
      "creds.json, line 1: credentials[1]: duplicate principal 'a'");
  expectParseError("{\"credentials\": [{\"principal\": \"\", \"secret\": \"b\"}]}",
                   "creds.json, line 1: credentials[0]: empty principal");
  expectParseError("{\"credentials\": [{\"principal\": \"a\\q\", \"secret\": \"b\"}]}",
                   "creds.json, line 1, column 35: invalid escape in a string");
  // Strings are UTF-8, as RFC 8259 says and as the scheduler API reads them.
  expectParseError("{\"credentials\": [{\"principal\": \"a\xff\", \"secret\": \"b\"}]}",
                   "creds.json, line 1, column 34: invalid UTF-8 in a string");
  expectParseError("alice secret\nbob\n",
                   "creds.json, line 2: expected \"principal secret\", "
                   "found 1 words");
  expectParseError("alice secret extra\n",
                   "creds.json, line 1: expected \"principal secret\", found 3 words");
  expectParseError("a:b secret\n", "creds.json, line 1: principal 'a:b' contains ':'");
  // Nesting is bounded instead of recursing without limit.
  Result<CredentialStore> deep = CredentialStore::parse("{\"x\":" + std::string(1000, '[') + "}");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.message().find("nested deeper than 32"), std::string::npos) << deep.message();
}

TEST(HttpCredentialsTest, LoadsFiles) {
  std::string path = ::testing::TempDir() + "/http_credentials_" + std::to_string(getpid());
  {
    std::ofstream file(path);
    file << "{\"credentials\":[{\"principal\":\"p\",\"secret\":\"s\"}]}\n";
  }
  Result<CredentialStore> store = CredentialStore::load(path);
  ASSERT_TRUE(store.ok()) << store.message();
  EXPECT_TRUE(store->authenticate("p", "s"));
  std::remove(path.c_str());
  Result<CredentialStore> missing = CredentialStore::load(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("cannot open credentials file '" + path + "'"),
            std::string::npos)
      << missing.message();
}

}  // namespace
}  // namespace harvest::http
