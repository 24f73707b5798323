// Stream and Responder: the handles HttpServer gives out.
#include <memory>

#include "net/http_server.h"
#include "net/server_connection.h"

namespace harvest::http {

// ---- Stream and Responder: thin handles that forward to the server if it is still there.

bool Stream::send(std::string_view chunk) {
  if (!open_) return false;
  std::shared_ptr<detail::ServerConnection> conn = connection_.lock();
  if (!conn || conn->closed() || conn->stream.get() != this) {
    open_ = false;
    return false;
  }
  if (chunk.empty()) return true;  // An empty chunk would end the body.
  return conn->server->streamSend(*conn, *this, chunk);
}

void Stream::close() {
  if (!open_) return;
  std::shared_ptr<detail::ServerConnection> conn = connection_.lock();
  if (!conn || conn->closed() || conn->stream.get() != this) {
    open_ = false;
    return;
  }
  conn->server->streamClose(*conn, true);
}

void Stream::onClose(std::function<void()> callback) {
  if (reported_) {
    if (callback) callback();
    return;
  }
  onClose_ = std::move(callback);
}

size_t Stream::bufferedBytes() const {
  std::shared_ptr<detail::ServerConnection> conn = connection_.lock();
  return conn && !conn->closed() ? conn->unsent() : 0;
}

bool Responder::respond(Response response) {
  std::shared_ptr<detail::ServerConnection> conn = state_->connection.lock();
  if (!conn) {
    state_->answered = true;
    return false;
  }
  return conn->server->respond(*state_, std::move(response));
}

std::shared_ptr<Stream> Responder::startStream(int status, std::string contentType,
                                               Headers extraHeaders) {
  std::shared_ptr<detail::ServerConnection> conn = state_->connection.lock();
  if (!conn) {
    state_->answered = true;
    return HttpServer::closedStream();
  }
  return conn->server->startStream(*state_, status, contentType, extraHeaders);
}

bool Responder::answered() const {
  return state_->answered;
}

bool Responder::connected() const {
  std::shared_ptr<detail::ServerConnection> conn = state_->connection.lock();
  return conn && !conn->closed() && !conn->peerShutdown && !conn->peerEof;
}

}  // namespace harvest::http
