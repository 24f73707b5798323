#include "net/tls_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace harvest::http {

TlsSession::TlsSession(std::shared_ptr<const TlsContext> context, std::string_view peerHost,
                       uint16_t peerPort)
    : context_(std::move(context)) {
  ssl_ = SSL_new(context_->native());
  CHECK(ssl_ != nullptr) << "SSL_new: " << takeTlsErrors();
  // The session owns both buffers once they are attached.
  SSL_set_bio(ssl_, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
  if (context_->role() == TlsContext::Role::kServer) {
    SSL_set_accept_state(ssl_);
    return;
  }
  SSL_set_connect_state(ssl_);
  if (peerHost.empty()) return;
  server_ = std::string(peerHost) + ":" + std::to_string(peerPort);
  SSL_set_app_data(ssl_, &server_);
  if (SSL_SESSION* remembered = context_->sessionFor(server_)) {
    SSL_set_session(ssl_, remembered);
    SSL_SESSION_free(remembered);
  }
  const std::string host(peerHost);
  ASN1_OCTET_STRING* address = a2i_IPADDRESS(host.c_str());
  if (address != nullptr) {
    ASN1_OCTET_STRING_free(address);
    if (context_->options().verifiesPeer()) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str());
    }
    return;
  }
  SSL_set_tlsext_host_name(ssl_, host.c_str());  // SNI, for servers with several names.
  if (context_->options().verifiesPeer()) SSL_set1_host(ssl_, host.c_str());
}

TlsSession::~TlsSession() {
  // OpenSSL takes a connection freed without close_notify for a broken one and marks its
  // session unresumable. Harvest closes healthy connections that way (after an answer, on
  // idle), and since TLS 1.1 such a session may be resumed (RFC 5246, 7.2.1); only a failed
  // connection must lose its session, and OpenSSL has marked that already.
  if (!failed_) SSL_set_shutdown(ssl_, SSL_get_shutdown(ssl_) | SSL_SENT_SHUTDOWN);
  SSL_free(ssl_);
}

Status TlsSession::receive(std::string_view wire, std::string* plaintext) {
  ERR_clear_error();
  if (!wire.empty() && BIO_write(SSL_get_rbio(ssl_), wire.data(), static_cast<int>(wire.size())) !=
                           static_cast<int>(wire.size())) {
    return Status::ioError("TLS: cannot buffer received bytes");
  }
  std::array<char, 16 * 1024> buffer;
  while (!peerClosed_) {
    size_t read = 0;
    if (SSL_read_ex(ssl_, buffer.data(), buffer.size(), &read) == 1) {
      plaintext->append(buffer.data(), read);
      continue;
    }
    switch (SSL_get_error(ssl_, 0)) {
      case SSL_ERROR_WANT_READ:
        return Status();
      case SSL_ERROR_ZERO_RETURN:
        peerClosed_ = true;
        return Status();
      default: {
        failed_ = true;
        // A session the server would not take must not be offered again.
        if (!server_.empty() && !handshakeDone()) context_->forgetSession(server_);
        std::string why = "TLS: " + takeTlsErrors();
        const long verify = SSL_get_verify_result(ssl_);
        if (verify != X509_V_OK) {
          why += " (certificate: " + std::string(X509_verify_cert_error_string(verify)) + ")";
        }
        // A certificate that does not verify leaves the peer unproven; anything else is bytes
        // that are not the TLS the session expects.
        return verify != X509_V_OK ? Status::unauthenticated(why) : Status::invalidArgument(why);
      }
    }
  }
  return Status();
}

Status TlsSession::send(std::string_view plaintext) {
  ERR_clear_error();
  if (!SSL_is_init_finished(ssl_)) return Status::failedPrecondition("TLS: handshake not done");
  while (!plaintext.empty()) {
    size_t written = 0;
    if (SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &written) != 1) {
      failed_ = true;
      return Status::failedPrecondition("TLS: cannot encrypt: " + takeTlsErrors());
    }
    plaintext.remove_prefix(written);
  }
  return Status();
}

void TlsSession::takeOutgoing(std::string* wire) {
  // Read out rather than reset: a memory BIO's reset clears its whole capacity, which after one
  // large answer would cost every later small write as much.
  BIO* out = SSL_get_wbio(ssl_);
  const size_t pending = BIO_ctrl_pending(out);
  if (pending == 0) return;
  const size_t start = wire->size();
  wire->resize(start + pending);
  const int read = BIO_read(out, wire->data() + start, static_cast<int>(pending));
  wire->resize(start + static_cast<size_t>(std::max(read, 0)));
}

bool TlsSession::hasOutgoing() const {
  return BIO_ctrl_pending(SSL_get_wbio(ssl_)) > 0;
}

void TlsSession::close() {
  if (closing_) return;
  closing_ = true;
  ERR_clear_error();
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
}

bool TlsSession::handshakeDone() const {
  return SSL_is_init_finished(ssl_) == 1;
}

bool TlsSession::resumed() const {
  return SSL_session_reused(ssl_) == 1;
}

Status handshakeOnSocket(int fd, TlsSession& session, Duration timeout, std::string* plaintext) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  auto remainingMs = [&] {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
  };
  std::string wire;
  size_t sent = 0;
  std::array<char, 16 * 1024> buffer;
  // The first receive, with nothing received, produces the ClientHello.
  Status status = session.receive({}, plaintext);
  while (status.ok()) {
    session.takeOutgoing(&wire);
    while (sent < wire.size()) {
      const ssize_t n = ::send(fd, wire.data() + sent, wire.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status::ioError(std::string("send: ") + std::strerror(errno));
      }
      pollfd pfd{fd, POLLOUT, 0};
      if (::poll(&pfd, 1, remainingMs()) == 0) return Status::deadlineExceeded("timed out sending");
    }
    if (session.handshakeDone()) return Status();
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, remainingMs());
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return Status::deadlineExceeded("timed out");
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n == 0) return Status::unavailable("the server closed the connection");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return Status::ioError(std::string("recv: ") + std::strerror(errno));
    }
    status = session.receive(std::string_view(buffer.data(), static_cast<size_t>(n)), plaintext);
  }
  return status;
}

}  // namespace harvest::http
