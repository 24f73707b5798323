// An HttpServer driven on a thread of its own, as a master's loop drives it: poll() with a short
// timeout, then the tasks tests posted (standing in for the master's timers). Everything that
// touches the server or its streams must run on that thread: post() or call() it there.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "net/http_server.h"

namespace harvest::testkit {

class ServerThread {
 public:
  // Starts listening (port 0: any free loopback port) or fails the process: a test cannot go on
  // without its server.
  ServerThread(http::ServerOptions options, http::HttpServer::Handler handler);
  ~ServerThread();
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  uint16_t port() const { return port_; }

  void post(std::function<void()> task);

  // Runs `task` on the server thread and waits for its result.
  template <typename F>
  auto call(F task) -> decltype(task()) {
    std::promise<decltype(task())> done;
    auto future = done.get_future();
    post([&] {
      if constexpr (std::is_void_v<decltype(task())>) {
        task();
        done.set_value();
      } else {
        done.set_value(task());
      }
    });
    return future.get();
  }

  // Runs `arrive` on the calling thread while the server thread is held in a posted task, so
  // whatever `arrive` sends is reported to the server by one poll once the hold ends.
  void whileHeld(const std::function<void()>& arrive);

  // The server itself, for use on the server thread only.
  http::HttpServer& server() { return *server_; }

 private:
  std::unique_ptr<http::HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::function<void()>> tasks_;
};

}  // namespace harvest::testkit
