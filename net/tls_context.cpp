#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <ctime>
#include <iterator>

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
  return ContextResult::invalidArgument(what + ": " + takeTlsErrors());
}

// OpenSSL hands a client its sessions here: after a TLS 1.2 handshake, or when a TLS 1.3
// ticket arrives after the handshake. A client SSL's app data names its server (TlsSession
// sets it); without one the session is not kept.
int rememberNewSession(SSL* ssl, SSL_SESSION* session) {
  const auto* server = static_cast<const std::string*>(SSL_get_app_data(ssl));
  const auto* context = static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (server == nullptr || server->empty() || context == nullptr) return 0;
  context->rememberSession(*server, session);
  return 1;  // The reference is ours now.
}

// The server side of resumption: tickets (TLS 1.2 and 1.3) plus a bounded cache for clients
// that resume by session ID.
void enableServerResumption(SSL_CTX* raw) {
  // OpenSSL refuses to resume on a verifying server without a session ID context; one context
  // per server, so a constant names it.
  static constexpr unsigned char kSessionIdContext[] = "harvest";
  SSL_CTX_set_session_id_context(raw, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_SERVER);
  SSL_CTX_sess_set_cache_size(raw, kTlsServerSessionCacheSize);
  // A client keeps one session per server, so a second TLS 1.3 ticket would be wasted work.
  SSL_CTX_set_num_tickets(raw, 1);
}

}  // namespace

ContextResult TlsContext::create(const TlsOptions& options, Role role) {
  ERR_clear_error();
  if (!options.enableTlsV12 && !options.enableTlsV13) {
    return ContextResult::invalidArgument(
        "TLS: no protocol version enabled (enable TLS 1.2 or 1.3)");
  }
  if (role == Role::kServer && (options.certFile.empty() || options.keyFile.empty())) {
    return ContextResult::invalidArgument("TLS: a server needs a certificate file and a key file");
  }
  if (options.certFile.empty() != options.keyFile.empty()) {
    return ContextResult::invalidArgument(
        "TLS: a certificate file needs its key file, and the reverse");
  }
  if (options.verifyDepth < 0)
    return ContextResult::invalidArgument("TLS: the verify depth must be >= 0");
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
  // Servers stop accepting a session, and clients stop offering it, this long after the full
  // handshake that made it (a client's own default would be 7200 s).
  SSL_CTX_set_timeout(raw, kTlsSessionLifetimeSeconds);
  if (role == Role::kServer) {
    enableServerResumption(raw);
  } else {
    SSL_CTX_set_app_data(raw, const_cast<TlsContext*>(context.get()));
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(raw, &rememberNewSession);
  }
  return context;
}

TlsContext::~TlsContext() {
  for (auto& [server, session] : sessions_) SSL_SESSION_free(session);
  SSL_CTX_free(context_);
}

SSL_SESSION* TlsContext::sessionFor(const std::string& server) const {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  auto found = sessions_.find(server);
  if (found == sessions_.end()) return nullptr;
  const int64_t expires = static_cast<int64_t>(SSL_SESSION_get_time(found->second)) +
                          SSL_SESSION_get_timeout(found->second);
  if (!SSL_SESSION_is_resumable(found->second) || expires <= static_cast<int64_t>(time(nullptr))) {
    SSL_SESSION_free(found->second);
    sessions_.erase(found);
    return nullptr;
  }
  // A TLS 1.3 ticket is offered once (RFC 8446, C.4): the connection that uses it gets the
  // next one. A TLS 1.2 session stays, since resuming it brings no new one.
  SSL_SESSION* offered = found->second;
  if (SSL_SESSION_get_protocol_version(offered) == TLS1_3_VERSION) {
    sessions_.erase(found);
  } else {
    SSL_SESSION_up_ref(offered);
  }
  return offered;
}

void TlsContext::rememberSession(const std::string& server, SSL_SESSION* session) const {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  auto [slot, added] = sessions_.try_emplace(server, session);
  if (!added) {
    SSL_SESSION_free(slot->second);
    slot->second = session;
    return;
  }
  if (sessions_.size() > kTlsClientRememberedServers) {
    // Any other server's session makes room; a client dials few servers.
    auto victim = slot == sessions_.begin() ? std::next(slot) : sessions_.begin();
    SSL_SESSION_free(victim->second);
    sessions_.erase(victim);
  }
}

void TlsContext::forgetSession(const std::string& server) const {
  std::lock_guard<std::mutex> lock(sessionsMutex_);
  auto found = sessions_.find(server);
  if (found == sessions_.end()) return;
  SSL_SESSION_free(found->second);
  sessions_.erase(found);
}

}  // namespace harvest::http
