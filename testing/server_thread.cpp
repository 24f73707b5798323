#include "testing/server_thread.h"

#include <glog/logging.h>

namespace harvest::testkit {

ServerThread::ServerThread(http::ServerOptions options, http::HttpServer::Handler handler) {
  Result<std::unique_ptr<http::HttpServer>> started =
      http::HttpServer::start(std::move(options), std::move(handler));
  CHECK(started.ok()) << started.message();
  server_ = std::move(started).value();
  port_ = server_->port();
  thread_ = std::thread([this] {
    while (!stop_) {
      server_->poll(Duration::milliseconds(2));
      std::vector<std::function<void()>> tasks;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        tasks.swap(tasks_);
      }
      for (auto& task : tasks) task();
    }
  });
}

ServerThread::~ServerThread() {
  stop_ = true;
  thread_.join();
  server_.reset();
}

void ServerThread::post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  tasks_.push_back(std::move(task));
}

void ServerThread::whileHeld(const std::function<void()>& arrive) {
  std::promise<void> holding;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  post([&holding, released] {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();
  arrive();
  release.set_value();
}

}  // namespace harvest::testkit
