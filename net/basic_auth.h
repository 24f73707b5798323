// HTTP Basic authentication (RFC 7617): the Authorization header, and a store of
// principals and secrets loaded from a Mesos credentials file.
//
// Credentials files come in Mesos's two formats:
//   JSON: {"credentials": [{"principal": "p", "secret": "s"}, ...]}
//   text: one "principal secret" pair per line (blank lines ignored).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest::http {

// Compares in time that depends only on the lengths, never on where the inputs differ, so a
// remote caller cannot find a secret byte by byte by timing the answers.
bool constantTimeEquals(std::string_view a, std::string_view b);

struct Credential {
  std::string principal;
  std::string secret;
};

// Parses an Authorization header value "Basic <base64 of principal:secret>". The scheme name
// is case-insensitive; the principal may not contain ':' (the secret may).
Result<Credential> parseBasicAuthorization(std::string_view headerValue);
// The Authorization header value for `credential`, for clients.
std::string basicAuthorization(const Credential& credential);
// A client's credential file in Mesos's text format: "PRINCIPAL SECRET" on the first non-blank
// line (harvest-agent --credential, harvest --credential).
Result<Credential> loadCredentialFile(const std::string& path);

// Principals and their secrets. A value type; lookups never reveal a secret's bytes by timing.
class CredentialStore {
 public:
  // `text` in either format (JSON if its first non-space character is '{'). Errors name the
  // source, the line and the field at fault.
  static Result<CredentialStore> parse(std::string_view text,
                                       std::string_view source = "credentials");
  static Result<CredentialStore> load(const std::string& path);

  // Refuses an empty principal or one already present.
  Status add(Credential credential);
  bool authenticate(std::string_view principal, std::string_view secret) const;
  // Checks an Authorization header value; the authenticated principal, or why not.
  Result<std::string> authenticateHeader(std::string_view headerValue) const;

  size_t size() const { return secrets_.size(); }
  bool empty() const { return secrets_.empty(); }

 private:
  std::map<std::string, std::string, std::less<>> secrets_;
};

}  // namespace harvest::http
