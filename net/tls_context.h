// TlsOptions and TlsContext: the TLS configuration of a server or a client, with the meaning
// Mesos (libprocess) gives its LIBPROCESS_SSL_* settings, turned into one OpenSSL SSL_CTX.
//
// A context is immutable once built and shared by every connection that uses it; building
// one reads the certificate, key and CA files, so a bad path or a key that does not match the
// certificate is an error at startup rather than at the first handshake.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "common/status.h"

// OpenSSL's context, kept opaque here so only net/ sees OpenSSL's headers.
struct ssl_ctx_st;

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

 private:
  TlsContext(TlsOptions options, Role role, ssl_ctx_st* context)
      : options_(std::move(options)), role_(role), context_(context) {}

  TlsOptions options_;
  Role role_;
  ssl_ctx_st* context_;
};

// OpenSSL's queued errors for this thread, most recent last, joined with "; " (and the queue
// emptied); "unknown error" if there are none.
std::string takeTlsErrors();

}  // namespace harvest::http
