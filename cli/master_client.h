// MasterClient: the leading master as the command line reaches it. Calls go to the v1 operator
// API in protobuf (what a client can rely on across versions) with the operator's credential;
// a standby's redirect to the leader is followed once, as Mesos's own CLI does. Every failure
// comes back as a Status whose message is what to tell the operator: the master could not be
// reached, refused the credential (401) or the principal (403), or refused the call (its own
// answer, verbatim).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/host_port.h"
#include "common/status.h"
#include "common/time.h"
#include "net/basic_auth.h"
#include "net/http_client.h"
#include "protos/master_api.pb.h"

namespace harvest::cli {

// `master` is HOST:PORT, or zk://HOST:PORT[,...]/PATH for the master leading there (waiting at
// most `timeout` for ZooKeeper to say who).
Result<HostPort> findMaster(const std::string& master, Duration timeout);

class MasterClient {
 public:
  MasterClient(HostPort master, std::optional<http::Credential> credential, Duration timeout);

  // One operator API call; its Response (empty for calls Mesos answers with no body).
  Result<v1::master::Response> call(const v1::master::Call& call);
  // GET `target` (path and query); the body of a 200.
  Result<std::string> get(std::string_view target);
  const std::optional<http::Credential>& credential() const { return credential_; }
  // Where the last request was answered (the leader, after a redirect).
  const HostPort& master() const { return master_; }

 private:
  Result<http::ClientResponse> send(std::string_view method, std::string_view target,
                                    http::Headers headers, std::string_view body);
  Result<http::ClientResponse> sendOnce(std::string_view method, std::string_view target,
                                        const http::Headers& headers, std::string_view body);
  std::string where() const;

  HostPort master_;
  std::optional<http::Credential> credential_;
  Duration timeout_;
};

}  // namespace harvest::cli
