// RecordingAllocator: an Allocator that forwards every call to the allocator it wraps and
// records the call in a trace (harvest-master --allocator_trace; harvest-replay reads it).
//
// Each record holds the call's arguments, the clock's time at the call, the Status the call
// returned and every callback (offer, rescind, inverse offer) the allocator made during it.
// The allocator it wraps sees the clock stand still at that time for the whole call, so a
// replay that sets the clock to the recorded time reproduces the call exactly whatever clock
// the master runs on.
//
// Recording never fails a call: once the trace cannot be written (see TraceWriter) the calls
// still go through, unrecorded. metrics() and roleHistory() are not recorded: they change nothing.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"
#include "trace/allocator_calls.h"
#include "trace/trace_writer.h"

namespace harvest::trace {

// The module the wrapped allocator came from, for the trace's header.
struct RecordedModule {
  std::string name;
  std::string library;  // Empty: the built-in module.
  std::map<std::string, std::string> parameters;
};

class RecordingAllocator final : public Allocator {
 public:
  RecordingAllocator(std::unique_ptr<Allocator> allocator, std::unique_ptr<TraceWriter> writer,
                     RecordedModule module);
  ~RecordingAllocator() override;

  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override;
  // Every call of trace/allocator_calls.h: recorded, then passed on.
#define HARVEST_RECORDED_CALL(Name, field, Return, method, parameters, arguments) \
  Return method parameters override;
  HARVEST_ALLOCATOR_CALLS(HARVEST_RECORDED_CALL, HARVEST_RECORDED_CALL)
#undef HARVEST_RECORDED_CALL
  std::map<std::string, double> metrics() const override;
  Result<AgentRoleHistory> roleHistory(const std::string& agent) const override;

 private:
  using Record = v1::trace::TraceRecord;
  // Fills the record's call with `describe`, makes the call with the clock held at its time,
  // and appends the record with the outcome and the callbacks made meanwhile.
  template <typename Describe, typename Call>
  Status record(Describe&& describe, Call&& call);
  // record() for a call that answers `Answer`: nothing, a Status, or a Result.
  template <typename Describe, typename Call>
  auto recordCall(Describe&& describe, Call&& call) -> decltype(call());
  bool recording() const;

  // Declared before `allocator_`, which may read the clock while it is destroyed.
  std::function<Time()> clock_;
  Time callTime_;
  bool inCall_ = false;
  bool stopped_ = false;
  Record current_;
  std::unique_ptr<TraceWriter> writer_;
  RecordedModule module_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace harvest::trace
