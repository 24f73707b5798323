// TLS record pumping for HttpServer's connections: the only code that moves bytes between a
// connection's socket buffers and its TlsSession. It owns
//   - telling TLS from plaintext on a downgrade-capable listener (the first byte),
//   - feeding received records to the session and handing the plaintext to the parser,
//     queueing whatever the session answers (handshake messages, alerts),
//   - sealing plaintext output into records, a flush's worth at a time, and the close_notify
//     after a final answer.
// Sockets, parsing and connection states stay in http_server.cpp, sending in server_output.cpp;
// OpenSSL stays in TlsSession.
#include <glog/logging.h>

#include <memory>
#include <optional>
#include <string_view>

#include "net/http_server.h"
#include "net/server_connection.h"
#include "net/tls_session.h"

namespace harvest::http {

std::optional<std::string_view> HttpServer::decrypt(Connection& conn, std::string_view wire) {
  if (conn.protocolUndecided) {
    conn.protocolUndecided = false;
    if (static_cast<unsigned char>(wire.front()) == kTlsHandshakeRecord) {
      conn.tls = std::make_unique<TlsSession>(options_.tls);
    } else {
      ++stats_.plaintextConnections;
      VLOG(1) << conn.peer << " speaks plaintext; served without TLS (downgrade)";
    }
  }
  if (!conn.tls) return wire;
  const bool handshaking = !conn.tls->handshakeDone();
  plaintext_.clear();
  Status status = conn.tls->receive(wire, &plaintext_);
  if (conn.tls->hasOutgoing()) takeTlsOutgoing(conn);
  if (!status.ok()) {
    ++stats_.tlsFailures;
    LOG_EVERY_N(WARNING, 100) << "closing " << conn.peer << ": " << status.message();
    flush(conn);  // The alert, if the socket takes it, tells the peer why.
    closeConnection(conn, status.message());
    return std::nullopt;
  }
  if (handshaking && conn.tls->handshakeDone()) {
    ++stats_.tlsHandshakes;
    if (conn.tls->resumed()) ++stats_.tlsResumptions;
  }
  if (conn.tls->peerClosed()) conn.peerEof = true;
  return std::string_view(plaintext_);
}

bool HttpServer::seal(Connection& conn, std::string_view plaintext) {
  // Fails only before the handshake is done (a head timeout during it): nothing can be said
  // to the peer yet.
  if (Status status = conn.tls->send(plaintext); !status.ok()) {
    closeConnection(conn, status.message());
    return false;
  }
  conn.tls->takeOutgoing(&conn.out);
  return true;
}

bool HttpServer::sealUnsealed(Connection& conn) {
  if (!seal(conn, conn.unsealed)) return false;
  conn.unsealed.clear();
  return true;
}

void HttpServer::sendCloseNotify(Connection& conn) {
  if (!conn.tls || !conn.tls->handshakeDone() || conn.tls->closing()) return;
  // close_notify tells the peer the answer is whole, not cut by an attacker.
  conn.tls->close();
  takeTlsOutgoing(conn);
}

void HttpServer::takeTlsOutgoing(Connection& conn) {
  if (conn.outPos == conn.out.size()) {
    conn.out.clear();
    conn.outPos = 0;
  }
  conn.tls->takeOutgoing(&conn.out);
  markDirty(conn);
}

}  // namespace harvest::http
