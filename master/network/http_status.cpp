#include "master/network/http_status.h"

namespace harvest::master {

int httpStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;  // Bad Request: the caller must change the request.
    case StatusCode::kFailedPrecondition:
      return 409;  // Conflict: the request is fine, the master's state refuses it for now.
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kUnavailable:
      return 503;  // Service Unavailable: the same request may succeed later.
    case StatusCode::kDeadlineExceeded:
      return 504;  // Gateway Timeout: what the master waited on did not answer in time.
    // None is the caller's doing, and none is known to pass by itself if the caller waits
    // (503 would promise that): a plain server error.
    case StatusCode::kCorruption:
    case StatusCode::kIOError:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace harvest::master
