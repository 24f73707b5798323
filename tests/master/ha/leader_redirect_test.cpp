// A framework finds the leader from a standby's answer (testing/leader_redirect.h reading what
// master/ha/standby_server.h writes).
#include "testing/leader_redirect.h"

#include <gtest/gtest.h>

#include "master/ha/standby_server.h"

namespace harvest::testkit {
namespace {

http::ClientResponse received(const http::Response& sent) {
  http::ClientResponse response;
  response.status = sent.status;
  for (const auto& [name, value] : sent.headers) {
    std::string lowercase = name;
    for (char& c : lowercase) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    response.headers.emplace_back(lowercase, value);
  }
  return response;
}

http::ClientResponse redirect(const std::string& location) {
  http::ClientResponse response;
  response.status = 307;
  response.headers.emplace_back("location", location);
  return response;
}

TEST(LeaderRedirect, AStandbysAnswerNamesTheLeader) {
  auto standby = master::StandbyServer::start(http::ServerOptions{});
  ASSERT_TRUE(standby.ok()) << standby.message();
  v1::MasterInfo leader;
  leader.set_hostname("10.0.0.7");
  leader.set_port(5051);
  (*standby)->setLeader(leader);
  http::Request subscribe;
  subscribe.method = "POST";
  subscribe.target = subscribe.path = "/api/v1/scheduler";
  EXPECT_EQ(redirectTarget(received((*standby)->answer(subscribe))),
            (MasterEndpoint{"10.0.0.7", 5051}));
  // While none leads the standby answers 503: nowhere to go.
  (*standby)->setLeader(std::nullopt);
  EXPECT_EQ(redirectTarget(received((*standby)->answer(subscribe))), std::nullopt);
}

TEST(LeaderRedirect, AbsoluteLocationsAndBadOnes) {
  EXPECT_EQ(redirectTarget(redirect("http://master3:5050/api/v1/scheduler")),
            (MasterEndpoint{"master3", 5050}));
  EXPECT_EQ(redirectTarget(redirect("//master3:5050")), (MasterEndpoint{"master3", 5050}));
  EXPECT_EQ(redirectTarget(redirect("//master3/api/v1/scheduler")), std::nullopt);
  EXPECT_EQ(redirectTarget(redirect("//master3:0/")), std::nullopt);
  EXPECT_EQ(redirectTarget(redirect("//master3:70000/")), std::nullopt);
  EXPECT_EQ(redirectTarget(redirect("https://master3:5050/")), std::nullopt);
  http::ClientResponse ok = redirect("//master3:5050");
  ok.status = 200;
  EXPECT_EQ(redirectTarget(ok), std::nullopt);
}

}  // namespace
}  // namespace harvest::testkit
