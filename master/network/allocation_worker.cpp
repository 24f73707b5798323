#include "master/network/allocation_worker.h"

#include <glog/logging.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace harvest::master {

Result<std::unique_ptr<AllocationWorker>> AllocationWorker::start() {
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return Status::ioError(std::string("eventfd: ") + std::strerror(errno));
  return std::unique_ptr<AllocationWorker>(new AllocationWorker(fd));
}

AllocationWorker::AllocationWorker(int wakeFd) : wakeFd_(wakeFd), thread_([this] { serve(); }) {}

AllocationWorker::~AllocationWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  started_.notify_one();
  thread_.join();
  ::close(wakeFd_);
}

void AllocationWorker::start(std::function<void()> cycle, std::function<void()> apply) {
  CHECK(!busy()) << "an allocation cycle is already running";
  apply_ = std::move(apply);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cycle_ = std::move(cycle);
    ended_ = false;
  }
  started_.notify_one();
}

bool AllocationWorker::finish() {
  uint64_t count = 0;
  while (::read(wakeFd_, &count, sizeof(count)) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ended_) return false;
    ended_ = false;
  }
  std::function<void()> apply = std::move(apply_);
  apply_ = nullptr;
  apply();
  return true;
}

void AllocationWorker::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    started_.wait(lock, [this] { return stopping_ || cycle_ != nullptr; });
    // A cycle already started runs to its end even when stopping: the allocator must not be
    // left mid-cycle, and the owner's destructor waits for it anyway.
    if (cycle_ == nullptr) return;
    std::function<void()> cycle = std::move(cycle_);
    cycle_ = nullptr;
    lock.unlock();
    cycle();
    lock.lock();
    ended_ = true;
    const uint64_t one = 1;
    while (::write(wakeFd_, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace harvest::master
