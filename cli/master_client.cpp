#include "cli/master_client.h"

#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "ha/leading_master.h"
#include "ha/zookeeper_url.h"

namespace harvest::cli {
namespace {

constexpr std::string_view kProtobuf = "application/x-protobuf";

// What the master said, for the operator: its own words when it gave some.
std::string answerText(const http::ClientResponse& response) {
  std::string text = std::to_string(response.status);
  if (!response.reason.empty()) text += " " + response.reason;
  if (!response.body.empty()) text += ": " + response.body;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

Result<HostPort> findMaster(const std::string& master, Duration timeout) {
  if (!master.starts_with("zk://")) {
    Result<HostPort> address = parseHostPort(master);
    if (address.ok() && address->port == 0) {
      return Status::invalidArgument("'" + master + "': the master's port cannot be 0");
    }
    return address;
  }
  Result<ha::ZooKeeperUrl> url = ha::ZooKeeperUrl::parse(master);
  if (!url.ok()) return url.status();
  auto follower = ha::LeadingMaster::start(*url, timeout);
  if (!follower.ok()) {
    return Status::unavailable("cannot reach ZooKeeper: " + follower.message());
  }
  // The first answer comes from the session's thread shortly after it starts.
  const auto deadline = std::chrono::steady_clock::now() + timeout.chrono();
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto leader = (*follower)->address()) return HostPort{leader->host, leader->port};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::notFound("no master leads under " + url->toString());
}

MasterClient::MasterClient(HostPort master, std::optional<http::Credential> credential,
                           Duration timeout)
    : master_(std::move(master)), credential_(std::move(credential)), timeout_(timeout) {}

std::string MasterClient::where() const {
  return "the master at " + formatHostPort(master_.host, master_.port);
}

Result<http::ClientResponse> MasterClient::sendOnce(std::string_view method,
                                                    std::string_view target,
                                                    const http::Headers& headers,
                                                    std::string_view body) {
  Result<http::Connection> connection =
      http::Connection::connect(master_.host, master_.port, timeout_);
  if (!connection.ok())
    return Status::unavailable("cannot reach " + where() + ": " + connection.message());
  http::Connection open = std::move(connection).value();
  auto response = open.request(method, target, headers, body, timeout_);
  if (!response.ok())
    return Status::unavailable(where() + " did not answer: " + response.message());
  return response;
}

Result<http::ClientResponse> MasterClient::send(std::string_view method, std::string_view target,
                                                http::Headers headers, std::string_view body) {
  if (credential_) headers.emplace_back("Authorization", http::basicAuthorization(*credential_));
  auto response = sendOnce(method, target, headers, body);
  if (!response.ok()) return response;
  // A standby names the leader as //HOST:PORT/PATH (or with a scheme); one hop, so two standbys
  // cannot loop us.
  if (response->status == 307) {
    const std::string* location = response->header("location");
    std::string_view rest = location == nullptr ? std::string_view() : *location;
    for (std::string_view scheme : {"http:", "https:"}) {
      if (rest.starts_with(scheme)) rest.remove_prefix(scheme.size());
    }
    if (!rest.starts_with("//")) {
      return Status::failedPrecondition(where() +
                                        " redirected without a leader: " + answerText(*response));
    }
    rest.remove_prefix(2);
    Result<HostPort> leader = parseHostPort(rest.substr(0, rest.find('/')));
    if (!leader.ok()) return Status::failedPrecondition("bad redirect: " + leader.message());
    master_ = *leader;
    response = sendOnce(method, target, headers, body);
    if (!response.ok()) return response;
  }
  switch (response->status) {
    case 200:
    case 202:
      return response;
    case 401:
      return Status::unauthenticated(where() + " refused the credential (" + answerText(*response) +
                                     "); give one with --credential=PATH");
    case 403:
      return Status::permissionDenied(where() + " does not let this principal do that (" +
                                      answerText(*response) + ")");
    case 404:
      return Status::notFound(where() + " answered " + answerText(*response));
    case 503:
      return Status::unavailable(where() + " cannot answer now (" + answerText(*response) + ")");
    default:
      return Status::invalidArgument(where() + " refused the call: " + answerText(*response));
  }
}

Result<v1::master::Response> MasterClient::call(const v1::master::Call& call) {
  const http::Headers headers = {{"Content-Type", std::string(kProtobuf)},
                                 {"Accept", std::string(kProtobuf)}};
  auto answer = send("POST", "/api/v1", headers, call.SerializeAsString());
  if (!answer.ok()) return answer.status();
  v1::master::Response response;
  if (!answer->body.empty() && !response.ParseFromString(answer->body)) {
    return Status::corruption(where() + " sent a response that does not decode");
  }
  return response;
}

Result<std::string> MasterClient::get(std::string_view target) {
  auto answer = send("GET", target, {}, {});
  if (!answer.ok()) return answer.status();
  return std::move(answer).value().body;
}

}  // namespace harvest::cli
