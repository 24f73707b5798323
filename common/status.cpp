#include "common/status.h"

namespace harvest {

const char* toString(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kCorruption:
      return "CORRUPTION";
    case StatusCode::kIOError:
      return "IO_ERROR";
  }
  return "UNKNOWN";
}

}  // namespace harvest
