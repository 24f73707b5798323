// Replayer: drives an allocator through a trace's calls, as the master made them, with the
// clock set to each call's recorded time, and collects what each call returns and calls back.
//
// The allocator is created by the caller (any module, any parameters) and initialized here by
// the trace's initialize record. A call the allocator refuses is not an error of the replay: an
// allocator with other parameters makes other offers, and the master's later calls (accepts,
// declines) then name resources it never offered. Only a record that does not decode is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "allocator/allocator.h"
#include "common/status.h"
#include "protos/trace.pb.h"

namespace harvest::trace {

// What one replayed call did.
struct ReplayedCall {
  Status status;
  // Encoded as the recorder encodes them (trace_codec.h), so they compare with the recorded.
  std::vector<v1::trace::Callback> callbacks;
  bool isAllocate = false;
  double wallMillis = 0;  // How long the allocator took (check and diff keep allocate's).
};

// What a replay drives: a fresh allocator (it must outlive the replay), the options to
// initialize it with (their clock is replaced by the trace's), and role weights that override
// the recorded ones: set once the allocator is initialized, and over every updateWeights call.
struct ReplayTarget {
  Allocator* allocator = nullptr;
  AllocatorOptions options;
  std::map<std::string, double> weights;
};

class Replayer {
 public:
  explicit Replayer(ReplayTarget target);

  // Makes the call `record` holds. The error is for a record that does not decode; what the
  // allocator answered is in the ReplayedCall.
  Result<ReplayedCall> replay(const v1::trace::TraceRecord& record);

 private:
  // Decodes the record's call (trace/allocator_calls.h lists them) and makes it.
  Status call(const v1::trace::TraceRecord& record, ReplayedCall& out);
  Status initialize();
  template <typename Arguments, typename Method>
  Status make(Result<Arguments> decoded, ReplayedCall& out, Method&& method);
  // The target's weights replace the recorded ones in updateWeights (the one call with role
  // weights as its arguments); every other call is made as recorded.
  template <typename Arguments>
  void overrideArguments(Arguments& /*recorded*/) {}
  void overrideArguments(std::tuple<std::map<std::string, double>>& weights);

  Allocator& allocator_;
  AllocatorOptions options_;
  const std::map<std::string, double> weights_;
  Time now_;
  // Where the callbacks of the call being replayed go.
  std::vector<v1::trace::Callback>* callbacks_ = nullptr;
};

// One line naming a record's call and time, for messages: "allocate at 12.000 s".
std::string describeCall(const v1::trace::TraceRecord& record);
// One line for a callback: "OFFER to fw-1: role r on agent a1: cpus:2; mem:1024".
std::string describeCallback(const v1::trace::Callback& callback);

}  // namespace harvest::trace
