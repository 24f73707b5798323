// TlsOptions and TlsContext: the TLS configuration of a server or a client, with the meaning
// Mesos (libprocess) gives its LIBPROCESS_SSL_* settings, turned into one OpenSSL SSL_CTX.
//
// A context is immutable once built and shared by every connection that uses it; building
// one reads the certificate, key and CA files, so a bad path or a key that does not match the
// certificate is an error at startup rather than at the first handshake.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "common/status.h"

// OpenSSL's context and session, kept opaque here so only net/ sees OpenSSL's headers.
struct ssl_ctx_st;
struct ssl_session_st;

namespace harvest::http {

struct TlsOptions {
  // LIBPROCESS_SSL_ENABLED: servers speak TLS and clients dial with it.
  bool enabled = false;
  // LIBPROCESS_SSL_SUPPORT_DOWNGRADE: a server also serves plaintext on the same port, telling
  // the two apart by the first byte a client sends.
  bool supportDowngrade = false;
  // LIBPROCESS_SSL_CERT_FILE / _KEY_FILE: PEM. A server must have both; a client presents
  // them when given (to a server that requires a certificate).
  std::string certFile;
  std::string keyFile;
  // LIBPROCESS_SSL_VERIFY_CERT: a server checks a client certificate when one is presented; a
  // client checks the server's certificate chain and that it names the host dialled.
  bool verifyCert = false;
  // LIBPROCESS_SSL_REQUIRE_CERT: a server refuses clients without a valid certificate (this
  // implies verifyCert).
  bool requireCert = false;
  // LIBPROCESS_SSL_VERIFY_DEPTH: longest certificate chain accepted.
  int verifyDepth = 4;
  // LIBPROCESS_SSL_CA_DIR / _CA_FILE: the trusted CAs; both empty: the system's.
  std::string caDir;
  std::string caFile;
  // LIBPROCESS_SSL_CIPHERS: OpenSSL cipher list for TLS 1.2, ':'-separated; empty: OpenSSL's
  // default list.
  std::string ciphers;
  // LIBPROCESS_SSL_ENABLE_TLS_V1_2 / _V1_3: the protocol versions offered and accepted.
  bool enableTlsV12 = true;
  bool enableTlsV13 = false;

  bool verifiesPeer() const { return verifyCert || requireCert; }
};

// Session resumption (docs/TLS.md): a server context issues tickets sealed with keys OpenSSL
// draws at random when the context is built, so they die with the process and no other
// context can open them; a client context remembers the newest session each server gave it.
inline constexpr long kTlsSessionLifetimeSeconds = 300;  // OpenSSL's default.
// Sessions a server keeps for clients that resume by session ID rather than by ticket.
inline constexpr long kTlsServerSessionCacheSize = 1024;
// Servers a client context remembers a session for; dialling one more forgets another.
inline constexpr size_t kTlsClientRememberedServers = 64;

class TlsContext {
 public:
  enum class Role { kServer, kClient };

  // Builds the context, or says which setting is wrong (unreadable file, key not matching
  // the certificate, no protocol version enabled, a cipher list OpenSSL rejects).
  static Result<std::shared_ptr<const TlsContext>> create(const TlsOptions& options, Role role);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  Role role() const { return role_; }
  const TlsOptions& options() const { return options_; }
  ssl_ctx_st* native() const { return context_; }

  // Clients: the session to offer when dialling `server` ("host:port"), with a reference the
  // caller owns (SSL_SESSION_free); null if there is none. A session is only ever offered by
  // the context that verified the server it came from, to that same server; a TLS 1.3 one only
  // once.
  ssl_session_st* sessionFor(const std::string& server) const;
  // Clients: keeps `session` (taking over the caller's reference) as the one for `server`.
  void rememberSession(const std::string& server, ssl_session_st* session) const;
  // Clients: after a failed handshake, so a session the server refused is not offered again.
  void forgetSession(const std::string& server) const;

 private:
  TlsContext(TlsOptions options, Role role, ssl_ctx_st* context)
      : options_(std::move(options)), role_(role), context_(context) {}

  TlsOptions options_;
  Role role_;
  ssl_ctx_st* context_;
  // The cache is not part of the configuration: a context stays logically immutable.
  mutable std::mutex sessionsMutex_;
  mutable std::map<std::string, ssl_session_st*> sessions_;
};

// OpenSSL's queued errors for this thread, most recent last, joined with "; " (and the queue
// emptied); "unknown error" if there are none.
std::string takeTlsErrors();

}  // namespace harvest::http
