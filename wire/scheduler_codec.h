// Wire codec of the v1 scheduler HTTP API (POST /api/v1/scheduler): decodes and checks a
// framework's Call, picks the response encoding from the Accept header, and encodes Events.
//
// It only knows about bytes and messages: whether the framework is subscribed, whether the
// Mesos-Stream-Id matches, and what a call does are the master's business. Every refusal comes
// with the HTTP status to answer, following Mesos (see the table in scheduler_codec.cpp).
// RecordIO framing of the event stream is master/http/recordio.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "common/time.h"
#include "protos/scheduler.pb.h"

namespace harvest::wire {

// The two encodings of the API, for request bodies (Content-Type) and responses (Accept).
enum class Format { kJson, kProtobuf };

// "application/json" or "application/x-protobuf", for the response's Content-Type.
const char* mediaType(Format format);

// The status a refused request is answered with.
enum class HttpStatus : int {
  kBadRequest = 400,            // Malformed body, or a call that is not well-formed.
  kNotAcceptable = 406,         // Accept allows neither encoding.
  kUnsupportedMediaType = 415,  // Content-Type is neither encoding.
  kNotImplemented = 501,        // Call type UNKNOWN (an explicit UNKNOWN, as Mesos answers).
};

// Result<T> (common/status.h) whose error also says which HTTP status to answer with.
template <typename T>
class [[nodiscard]] HttpResult {
 public:
  HttpResult(T value) : result_(std::move(value)) {}  // NOLINT: implicit, like Result.
  static HttpResult error(HttpStatus status, std::string message) {
    return HttpResult(status, Status::invalidArgument(std::move(message)));
  }

  bool ok() const { return result_.ok(); }
  const Status& status() const { return result_.status(); }
  const std::string& message() const { return result_.message(); }
  const T& value() const& { return result_.value(); }
  T&& value() && { return std::move(result_).value(); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

  // The status to answer with; only an error has one.
  HttpStatus httpStatus() const {
    CHECK(!ok()) << "httpStatus() of a successful HttpResult";
    return httpStatus_;
  }
  int httpCode() const { return static_cast<int>(httpStatus()); }

 private:
  HttpResult(HttpStatus status, Status error) : result_(std::move(error)), httpStatus_(status) {}

  Result<T> result_;
  HttpStatus httpStatus_ = HttpStatus::kBadRequest;
};

// The request body's encoding from its Content-Type: case-insensitive, parameters such as
// "; charset=utf-8" ignored. Empty (header missing) is 400, anything else unknown 415.
HttpResult<Format> requestFormat(std::string_view contentType);

// Decodes a Call body and checks it the way Mesos's master does before looking at any state:
// required fields present, `type` set, the payload field `type` names present, `framework_id`
// present (except for SUBSCRIBE) and agreeing with the FrameworkInfo a SUBSCRIBE or
// UPDATE_FRAMEWORK carries, acknowledged uuids 16 bytes long. Strings must be UTF-8 in both
// encodings (binary proto2 would not check).
//
// JSON: RFC 8259 text, field names as in the .proto (snake_case) or lowerCamel; unknown fields
// are ignored; a member whose value is null counts as absent; bytes are base64, padded or not
// (trailing bits that do not fill a byte are ignored, as Mesos does).
HttpResult<v1::scheduler::Call> decodeCall(std::string_view contentType, std::string_view body);

// decodeCall into `call`, which must be empty, so the caller chooses where the Call lives (a
// protobuf Arena: wire/call_arena.h). Returns the body's format; on error `call` may hold part of
// the input and is to be discarded.
HttpResult<Format> decodeCallInto(std::string_view contentType, std::string_view body,
                                  v1::scheduler::Call* call);

// The encoding for the response from the request's Accept header. Empty, "*/*" and
// "application/*" mean `requestFormat`; q-values are honoured (q=0 excludes), ties go to
// `requestFormat`. 406 when neither JSON nor protobuf is acceptable.
HttpResult<Format> responseFormat(std::string_view acceptHeader, Format requestFormat);

// One Event as JSON (proto field names, enums by name, 64-bit integers as numbers as Mesos
// writes them, bytes base64, only set fields) or as binary protobuf.
std::string encodeEvent(const v1::scheduler::Event& event, Format format);
// encodeEvent appended to `out`, so a caller can keep one buffer for every event it sends.
void appendEvent(const v1::scheduler::Event& event, Format format, std::string* out);

// The label key of TaskInfo.labels that holds a simulated task's running time (mesos.proto).
inline constexpr std::string_view kDurationLabel = "harvest.duration_seconds";

// The task's simulated running time, from its kDurationLabel label; nullopt without one (the
// task runs until killed). Errors for a value that is not a finite, non-negative decimal
// number of seconds, is too large, or is given twice differently.
Result<std::optional<Duration>> taskDuration(const v1::TaskInfo& task);

}  // namespace harvest::wire
