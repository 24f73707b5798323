// TLS session resumption: a client that dials the same server again resumes its session, and
// resumption opens no door verification closes. Handshakes run between two TlsSessions in
// memory (fast, and the test chooses which server a client meets under one name); one test
// goes through the real client and server over loopback. Every test runs with TLS 1.2 and 1.3,
// whose resumption mechanisms differ (a ticket in the handshake vs one after it).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/tls_context.h"
#include "net/tls_session.h"
#include "test_pki.h"
#include "testing/server_thread.h"

namespace harvest::http {
namespace {

using testkit::PemFiles;
using testkit::TestPki;

constexpr Duration kTimeout = Duration::seconds(2);
// The name every in-memory client dials: which server answers is up to the test.
constexpr char kServerHost[] = "127.0.0.1";
constexpr uint16_t kServerPort = 5050;

enum class Version { kTls12, kTls13 };

struct Handshake {
  Status client;
  Status server;
  bool clientResumed = false;
  bool serverResumed = false;
  bool ok() const { return client.ok() && server.ok(); }
};

// Runs a handshake in memory until neither side has anything left to say, so a TLS 1.3
// ticket sent after the handshake reaches the client too.
Handshake handshake(TlsSession& client, TlsSession& server) {
  Handshake result;
  std::string plaintext;
  result.client = client.receive({}, &plaintext);
  while (result.ok() && (client.hasOutgoing() || server.hasOutgoing())) {
    std::string wire;
    client.takeOutgoing(&wire);
    result.server = server.receive(wire, &plaintext);
    wire.clear();
    server.takeOutgoing(&wire);
    if (!wire.empty()) result.client = client.receive(wire, &plaintext);
  }
  if (result.ok() && !(client.handshakeDone() && server.handshakeDone())) {
    result.client = Status::internal("the handshake stalled");
  }
  result.clientResumed = client.resumed();
  result.serverResumed = server.resumed();
  return result;
}

// A client session dialling kServerHost:kServerPort, offering what its context remembers.
Handshake handshake(const std::shared_ptr<const TlsContext>& clientContext,
                    const std::shared_ptr<const TlsContext>& serverContext) {
  TlsSession client(clientContext, kServerHost, kServerPort);
  TlsSession server(serverContext);
  return handshake(client, server);
}

// A trusted CA signing the server's and the client's certificates; a rogue CA signing an
// impostor server's and an attacker client's.
class TlsResumptionTest : public ::testing::TestWithParam<Version> {
 protected:
  TlsResumptionTest()
      : trustedCa_(pki_.makeCa("trusted-ca")),
        serverCert_(pki_.issue(trustedCa_, "server")),
        clientCert_(pki_.issue(trustedCa_, "client")),
        rogueCa_(pki_.makeCa("rogue-ca")),
        rogueCert_(pki_.issue(rogueCa_, "rogue")) {}

  TlsOptions base() const {
    TlsOptions tls;
    tls.enabled = true;
    tls.enableTlsV12 = GetParam() == Version::kTls12;
    tls.enableTlsV13 = GetParam() == Version::kTls13;
    return tls;
  }

  // A server presenting `certificate` that requires clients certified by `clientCa`.
  std::shared_ptr<const TlsContext> server(const PemFiles& certificate,
                                           const PemFiles& clientCa) const {
    TlsOptions tls = base();
    tls.certFile = certificate.certFile;
    tls.keyFile = certificate.keyFile;
    tls.requireCert = true;
    tls.caFile = clientCa.certFile;
    return context(tls, TlsContext::Role::kServer);
  }

  // A client presenting `certificate` that verifies servers against the trusted CA.
  std::shared_ptr<const TlsContext> client(const PemFiles& certificate) const {
    TlsOptions tls = base();
    tls.certFile = certificate.certFile;
    tls.keyFile = certificate.keyFile;
    tls.verifyCert = true;
    tls.caFile = trustedCa_.certFile;
    return context(tls, TlsContext::Role::kClient);
  }

  static std::shared_ptr<const TlsContext> context(const TlsOptions& options,
                                                   TlsContext::Role role) {
    Result<std::shared_ptr<const TlsContext>> built = TlsContext::create(options, role);
    CHECK(built.ok()) << built.message();
    return std::move(built).value();
  }

  TestPki pki_;
  PemFiles trustedCa_, serverCert_, clientCert_, rogueCa_, rogueCert_;
};

INSTANTIATE_TEST_SUITE_P(Versions, TlsResumptionTest,
                         ::testing::Values(Version::kTls12, Version::kTls13),
                         [](const ::testing::TestParamInfo<Version>& info) {
                           return info.param == Version::kTls12 ? "Tls12" : "Tls13";
                         });

TEST_P(TlsResumptionTest, SecondHandshakeWithTheSameServerResumes) {
  std::shared_ptr<const TlsContext> master = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> agent = client(clientCert_);

  Handshake first = handshake(agent, master);
  ASSERT_TRUE(first.ok()) << first.client.message() << " / " << first.server.message();
  EXPECT_FALSE(first.clientResumed);
  EXPECT_FALSE(first.serverResumed);

  for (int again = 0; again < 2; ++again) {
    Handshake next = handshake(agent, master);
    ASSERT_TRUE(next.ok()) << next.client.message() << " / " << next.server.message();
    EXPECT_TRUE(next.clientResumed);
    EXPECT_TRUE(next.serverResumed);
  }
}

TEST_P(TlsResumptionTest, Tls13TicketIsOfferedOnceAndTls12SessionAgain) {
  std::shared_ptr<const TlsContext> master = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> agent = client(clientCert_);
  ASSERT_TRUE(handshake(agent, master).ok());
  // Two connections dialled before either has finished: with TLS 1.3 the one ticket goes to
  // the first (RFC 8446 asks clients not to reuse tickets); a TLS 1.2 session serves both.
  TlsSession firstClient(agent, kServerHost, kServerPort);
  TlsSession secondClient(agent, kServerHost, kServerPort);
  TlsSession firstServer(master);
  TlsSession secondServer(master);
  Handshake first = handshake(firstClient, firstServer);
  Handshake second = handshake(secondClient, secondServer);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(first.serverResumed);
  EXPECT_EQ(second.serverResumed, GetParam() == Version::kTls12);
}

TEST_P(TlsResumptionTest, SessionFromAnotherServerContextIsNotAccepted) {
  // Two servers with the same certificate and settings: a restarted master, or a second
  // master behind the same address. Each seals its tickets with keys of its own.
  std::shared_ptr<const TlsContext> before = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> after = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> agent = client(clientCert_);
  ASSERT_TRUE(handshake(agent, before).ok());

  Handshake full = handshake(agent, after);
  ASSERT_TRUE(full.ok()) << full.client.message() << " / " << full.server.message();
  EXPECT_FALSE(full.clientResumed);
  EXPECT_FALSE(full.serverResumed);
  // The full handshake's session replaces the old one.
  Handshake resumed = handshake(agent, after);
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed.serverResumed);
}

TEST_P(TlsResumptionTest, UntrustedClientCannotResumeIntoAServerThatRequiresTrust) {
  // The attacker gets a genuine session from a laxer server under the master's address (one
  // that trusts the rogue CA, with the master's own certificate), then dials the real master
  // offering it, hoping to skip the client-certificate check.
  std::shared_ptr<const TlsContext> lax = server(serverCert_, rogueCa_);
  std::shared_ptr<const TlsContext> master = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> attacker = client(rogueCert_);
  Handshake foothold = handshake(attacker, lax);
  ASSERT_TRUE(foothold.ok()) << foothold.client.message() << " / " << foothold.server.message();

  Handshake attack = handshake(attacker, master);
  EXPECT_FALSE(attack.server.ok());
  EXPECT_NE(attack.server.message().find("certificate verify failed"), std::string::npos)
      << attack.server.message();
  EXPECT_FALSE(attack.serverResumed);
}

TEST_P(TlsResumptionTest, ClientStillVerifiesAServerThatDoesNotResumeItsSession) {
  // An impostor at the master's address, with a rogue-CA certificate, cannot lean on the
  // session the client has from the real master: the handshake is full and fails the check.
  std::shared_ptr<const TlsContext> master = server(serverCert_, trustedCa_);
  std::shared_ptr<const TlsContext> impostor = server(rogueCert_, trustedCa_);
  std::shared_ptr<const TlsContext> agent = client(clientCert_);
  ASSERT_TRUE(handshake(agent, master).ok());

  Handshake attack = handshake(agent, impostor);
  EXPECT_FALSE(attack.client.ok());
  EXPECT_NE(attack.client.message().find("certificate verify failed"), std::string::npos)
      << attack.client.message();
  EXPECT_FALSE(attack.clientResumed);
}

TEST_P(TlsResumptionTest, ReconnectingClientResumesOverLoopback) {
  ServerOptions options;
  options.tls = server(serverCert_, trustedCa_);
  testkit::ServerThread master(options, [](const Request&, Responder& responder) {
    responder.respond(Response::text(200, "ok"));
  });
  ClientOptions clientOptions;
  clientOptions.tls = client(clientCert_);

  auto dial = [&](const ClientOptions& with) {
    Result<Connection> connection = Connection::connect(kServerHost, master.port(), kTimeout, with);
    CHECK(connection.ok()) << connection.message();
    Connection open = std::move(connection).value();
    // The answer also carries a TLS 1.3 ticket, which arrives after the handshake.
    Result<ClientResponse> response = open.request("GET", "/x", {}, {}, kTimeout);
    CHECK(response.ok()) << response.message();
    EXPECT_EQ(response->body, "ok");
    return open.tlsResumed();
  };
  EXPECT_FALSE(dial(clientOptions));
  EXPECT_TRUE(dial(clientOptions));
  EXPECT_TRUE(dial(clientOptions));
  // Sessions belong to the client context that verified the server.
  ClientOptions otherClient;
  otherClient.tls = client(clientCert_);
  EXPECT_FALSE(dial(otherClient));
  ServerStats stats = master.call([&] { return master.server().stats(); });
  EXPECT_EQ(stats.tlsHandshakes, 4u);
  EXPECT_EQ(stats.tlsResumptions, 2u);
}

}  // namespace
}  // namespace harvest::http
