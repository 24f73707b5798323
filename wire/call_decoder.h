// CallDecoder: decodes scheduler Calls one after another into one reused Call message.
//
// A fresh heap Call costs an allocation per sub-message, per repeated-field array and per
// string field (an ACCEPT launching one task: 35). Cleared, a Call keeps all of those for the
// next call, so decoding one of the same shape only allocates the contents of strings longer
// than std::string's inline capacity (the same ACCEPT: 3). wire_bench compares this with a
// protobuf Arena whose first block is kept (also 3 allocations, but Reset() and re-creating
// the sub-messages make it slower).
#pragma once

#include <cstddef>
#include <string_view>

#include "protos/scheduler.pb.h"
#include "wire/scheduler_codec.h"

namespace harvest::wire {

class CallDecoder {
 public:
  // A Call decoded from a body larger than this is dropped rather than reused, so the memory
  // one large call grew stays held only until the next call.
  static constexpr size_t kMaxReusedBodyBytes = 64 * 1024;

  // decodeCall's checks and answers; the decoded Call is call() until the next decode().
  HttpResult<Format> decode(std::string_view contentType, std::string_view body);
  // The last call decode() accepted (after a refusal, whatever part of the input it read).
  const v1::scheduler::Call& call() const { return call_; }

 private:
  v1::scheduler::Call call_;
  size_t lastBodyBytes_ = 0;
};

}  // namespace harvest::wire
