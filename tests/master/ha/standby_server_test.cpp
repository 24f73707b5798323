#include "master/ha/standby_server.h"

#include <gtest/gtest.h>

namespace harvest::master {
namespace {

http::Request get(const std::string& target) {
  http::Request request;
  request.method = "GET";
  request.target = target;
  request.path = target.substr(0, target.find('?'));
  return request;
}

const std::string* location(const http::Response& response) {
  for (const auto& [name, value] : response.headers) {
    if (name == "Location") return &value;
  }
  return nullptr;
}

class StandbyServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = StandbyServer::start(http::ServerOptions{});
    ASSERT_TRUE(started.ok()) << started.message();
    standby_ = std::move(started).value();
  }
  void leadBy(const std::string& hostname, uint32_t port) {
    v1::MasterInfo leader;
    leader.set_id("leader");
    leader.set_ip(0);
    leader.set_port(port);
    leader.set_hostname(hostname);
    leader.mutable_address()->set_hostname(hostname);
    leader.mutable_address()->set_ip("10.0.0.7");
    leader.mutable_address()->set_port(static_cast<int32_t>(port));
    standby_->setLeader(leader);
  }
  std::unique_ptr<StandbyServer> standby_;
};

TEST_F(StandbyServerTest, WithoutALeaderCallsAre503AndHealthIsOk) {
  EXPECT_EQ(standby_->answer(get("/api/v1/scheduler")).status, 503);
  EXPECT_EQ(standby_->answer(get("/api/v1/scheduler")).body, "No leader elected");
  EXPECT_EQ(standby_->answer(get("/master/redirect")).status, 503);
  EXPECT_EQ(standby_->answer(get("/health")).status, 200);
  const http::Response metrics = standby_->answer(get("/metrics/snapshot"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body, R"({"master/elected":0})");
}

TEST_F(StandbyServerTest, CallsAreRedirectedToTheLeaderKeepingThePath) {
  leadBy("master2.example", 5051);
  for (const char* path : {"/api/v1/scheduler", "/state", "/agent/v1/register"}) {
    const http::Response response = standby_->answer(get(path));
    EXPECT_EQ(response.status, 307) << path;
    ASSERT_NE(location(response), nullptr) << path;
    EXPECT_EQ(*location(response), std::string("//master2.example:5051") + path);
  }
  EXPECT_EQ(*location(standby_->answer(get("/state?jsonp=x"))), "//master2.example:5051/state");
}

// A person opening a standby's web UI lands on the leader's, its files included.
TEST_F(StandbyServerTest, TheWebUiIsRedirectedToTheLeaders) {
  leadBy("master2.example", 5051);
  for (const char* path : {"/", "/webui/app.js", "/webui/style.css"}) {
    const http::Response response = standby_->answer(get(path));
    EXPECT_EQ(response.status, 307) << path;
    ASSERT_NE(location(response), nullptr) << path;
    EXPECT_EQ(*location(response), std::string("//master2.example:5051") + path);
  }
}

TEST_F(StandbyServerTest, RedirectEndpointsPointAtTheLeadersRoot) {
  leadBy("10.0.0.7", 5050);
  EXPECT_EQ(*location(standby_->answer(get("/master/redirect"))), "//10.0.0.7:5050");
  EXPECT_EQ(*location(standby_->answer(get("/redirect"))), "//10.0.0.7:5050");
  standby_->setLeader(std::nullopt);
  EXPECT_EQ(standby_->answer(get("/master/redirect")).status, 503);
}

}  // namespace
}  // namespace harvest::master
