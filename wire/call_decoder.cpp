#include "wire/call_decoder.h"

namespace harvest::wire {

HttpResult<Format> CallDecoder::decode(std::string_view contentType, std::string_view body) {
  if (lastBodyBytes_ > kMaxReusedBodyBytes) {
    call_ = v1::scheduler::Call();
  } else {
    call_.Clear();
  }
  lastBodyBytes_ = body.size();
  return decodeCallInto(contentType, body, &call_);
}

}  // namespace harvest::wire
