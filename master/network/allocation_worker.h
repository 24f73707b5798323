// AllocationWorker: runs the network master's allocation cycles on a thread of their own, so
// the master thread keeps reading, parsing and writing sockets while the allocator works.
//
// The handoff is one cycle at a time: the owner (the master thread) calls start(), then makes
// no call into the master or its allocator until finish() has run the cycle's `apply` on the
// owner's thread. The worker signals the end through wakeFd(), which the owner's epoll
// watches; the mutex, not the eventfd, orders the cycle's writes before `apply`'s reads.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/status.h"

namespace harvest::master {

class AllocationWorker {
 public:
  static Result<std::unique_ptr<AllocationWorker>> start();
  // Waits for a running cycle to end (its `apply` is dropped) and joins the thread.
  ~AllocationWorker();
  AllocationWorker(const AllocationWorker&) = delete;
  AllocationWorker& operator=(const AllocationWorker&) = delete;

  // Readable once a cycle has ended; finish() drains it.
  int wakeFd() const { return wakeFd_; }
  // Owner thread: a cycle was started and its results are not applied yet.
  bool busy() const { return apply_ != nullptr; }
  // Owner thread, not busy(): runs `cycle` on the worker; finish() later runs `apply` here.
  void start(std::function<void()> cycle, std::function<void()> apply);
  // Owner thread, when wakeFd() is readable: if the cycle has ended, runs its `apply` and
  // returns true (no longer busy).
  bool finish();

 private:
  explicit AllocationWorker(int wakeFd);
  void serve();

  const int wakeFd_;
  std::function<void()> apply_;  // Owner thread only.
  std::mutex mutex_;
  std::condition_variable started_;
  // Guarded by mutex_: set by the owner, taken and run by the worker.
  std::function<void()> cycle_;
  bool ended_ = false;     // Guarded by mutex_: the worker finished cycle_.
  bool stopping_ = false;  // Guarded by mutex_.
  std::thread thread_;     // Started last, once everything it reads exists.
};

}  // namespace harvest::master
