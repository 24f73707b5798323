#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace harvest::http {

std::string takeTlsErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof(line));
    if (!text.empty()) text += "; ";
    text += line;
  }
  return text.empty() ? "unknown error" : text;
}

namespace {

using ContextResult = Result<std::shared_ptr<const TlsContext>>;

ContextResult failure(const std::string& what) {
  return ContextResult::error(what + ": " + takeTlsErrors());
}

}  // namespace

ContextResult TlsContext::create(const TlsOptions& options, Role role) {
  ERR_clear_error();
  if (!options.enableTlsV12 && !options.enableTlsV13) {
    return ContextResult::error("TLS: no protocol version enabled (enable TLS 1.2 or 1.3)");
  }
  if (role == Role::kServer && (options.certFile.empty() || options.keyFile.empty())) {
    return ContextResult::error("TLS: a server needs a certificate file and a key file");
  }
  if (options.certFile.empty() != options.keyFile.empty()) {
    return ContextResult::error("TLS: a certificate file needs its key file, and the reverse");
  }
  if (options.verifyDepth < 0) return ContextResult::error("TLS: the verify depth must be >= 0");
  SSL_CTX* raw = SSL_CTX_new(role == Role::kServer ? TLS_server_method() : TLS_client_method());
  if (raw == nullptr) return failure("TLS: cannot create a context");
  std::shared_ptr<const TlsContext> context(new TlsContext(options, role, raw));

  SSL_CTX_set_min_proto_version(raw, options.enableTlsV12 ? TLS1_2_VERSION : TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(raw, options.enableTlsV13 ? TLS1_3_VERSION : TLS1_2_VERSION);
  // Renegotiation would let a peer make the server redo handshakes at will.
  SSL_CTX_set_options(raw, SSL_OP_NO_RENEGOTIATION);
  if (!options.ciphers.empty() && SSL_CTX_set_cipher_list(raw, options.ciphers.c_str()) != 1) {
    return failure("TLS: bad cipher list '" + options.ciphers + "'");
  }
  if (!options.certFile.empty()) {
    if (SSL_CTX_use_certificate_chain_file(raw, options.certFile.c_str()) != 1) {
      return failure("TLS: cannot load the certificate file '" + options.certFile + "'");
    }
    // OpenSSL also refuses here a key that does not match the certificate.
    if (SSL_CTX_use_PrivateKey_file(raw, options.keyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
      return failure("TLS: cannot load the key file '" + options.keyFile + "'");
    }
  }
  if (!options.caFile.empty() || !options.caDir.empty()) {
    const char* file = options.caFile.empty() ? nullptr : options.caFile.c_str();
    const char* dir = options.caDir.empty() ? nullptr : options.caDir.c_str();
    if (SSL_CTX_load_verify_locations(raw, file, dir) != 1) {
      return failure("TLS: cannot load the CA file '" + options.caFile + "' or directory '" +
                     options.caDir + "'");
    }
  } else if (options.verifiesPeer() && SSL_CTX_set_default_verify_paths(raw) != 1) {
    return failure("TLS: cannot load the system's CAs");
  }
  int mode = SSL_VERIFY_NONE;
  if (options.requireCert) {
    mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  } else if (options.verifyCert) {
    // On a server this asks for a client certificate and checks it only if one comes.
    mode = SSL_VERIFY_PEER;
  }
  SSL_CTX_set_verify(raw, mode, nullptr);
  SSL_CTX_set_verify_depth(raw, options.verifyDepth);
  return context;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(context_);
}

}  // namespace harvest::http
