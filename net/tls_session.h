// TlsSession: one TLS connection's state over memory buffers, with no socket of its own.
//
// The owner moves bytes between the socket and the session: what it receives goes in through
// receive(), which hands back the plaintext those bytes complete; what the session has to
// send (handshake messages, encrypted records, alerts) comes out through takeOutgoing(). The
// socket code of the non-blocking server and of the client stays as it is, and a session
// never blocks or touches a file descriptor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"
#include "net/tls_context.h"

struct ssl_st;

namespace harvest::http {

class TlsSession {
 public:
  // `peerHost` (clients): the host dialled, which a verifying client requires the server's
  // certificate to name (a DNS name, or an IP address). With a host, a client offers the
  // session its context remembers for peerHost:peerPort, and remembers the new one.
  TlsSession(std::shared_ptr<const TlsContext> context, std::string_view peerHost = {},
             uint16_t peerPort = 0);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Feeds bytes from the peer and appends the plaintext they complete to *plaintext, moving
  // the handshake on. An error if the handshake fails (say, a certificate does not verify) or
  // the peer breaks the protocol; the connection is then useless. A clean close_notify from
  // the peer is not an error: peerClosed() turns true.
  Status receive(std::string_view wire, std::string* plaintext);
  // Encrypts plaintext for the peer (fetch it with takeOutgoing). Needs a finished handshake.
  Status send(std::string_view plaintext);
  // Appends everything waiting to go to the peer to *wire.
  void takeOutgoing(std::string* wire);
  bool hasOutgoing() const;
  // Queues close_notify, once.
  void close();

  bool handshakeDone() const;
  // The handshake resumed an earlier session instead of running a full one.
  bool resumed() const;
  bool peerClosed() const { return peerClosed_; }
  bool closing() const { return closing_; }

 private:
  std::shared_ptr<const TlsContext> context_;
  // Clients: "host:port", the key of the remembered session; OpenSSL's app data points here.
  std::string server_;
  ssl_st* ssl_ = nullptr;
  bool peerClosed_ = false;
  bool closing_ = false;
  bool failed_ = false;  // A handshake or record error: the session must not be resumed.
};

// Runs a client session's handshake on a connected non-blocking socket, waiting with poll()
// for at most `timeout` in all. Plaintext that arrives with the handshake's end is appended to
// *plaintext. An error says why the handshake failed (a certificate that does not verify, an
// alert from the server, the timeout).
Status handshakeOnSocket(int fd, TlsSession& session, Duration timeout, std::string* plaintext);

// The first byte of a TLS record carrying a handshake message: every TLS client opens with
// one (its ClientHello), while an HTTP request opens with a method's capital letter.
inline constexpr unsigned char kTlsHandshakeRecord = 0x16;

}  // namespace harvest::http
