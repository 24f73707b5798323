#include "wire/scheduler_codec.h"

#include <google/protobuf/descriptor.h>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <vector>

#include "common/json_reader.h"
#include "wire/call_json.h"
#include "wire/event_json.h"
#include "wire/utf8_fields.h"

// HTTP status codes of POST /api/v1/scheduler, from Mesos's "Scheduler HTTP API" document
// (docs/scheduler-http-api.md) and its master. The "codec" rows are the errors this file
// returns; the others are for the HTTP layer and the master to answer.
//
//   Status                      When                                                 Who
//   200 OK                      SUBSCRIBE accepted: the RecordIO event stream        master
//                               follows; UPDATE_FRAMEWORK applied
//   202 Accepted                any other valid call, queued; its effects arrive     master
//                               as events on the subscription stream
//   307 Temporary Redirect      not the leading master (Location: the leader)        master
//   400 Bad Request             Content-Type missing                                 codec
//   400 Bad Request             body not JSON / not a serialized Call; a required    codec
//                               field missing; no `type`; the payload field `type`
//                               names missing (e.g. ACCEPT without `accept`); no
//                               `framework_id` on a call other than SUBSCRIBE;
//                               `framework_id` differing from the FrameworkInfo id
//                               of SUBSCRIBE / UPDATE_FRAMEWORK; an acknowledged
//                               uuid not 16 bytes; ACKNOWLEDGE_OPERATION_STATUS
//                               without agent_id; a string that is not UTF-8
//   400 Bad Request             unknown framework; Mesos-Stream-Id missing on a      master
//                               call other than SUBSCRIBE, or not the
//                               subscription's; an invalid UPDATE_FRAMEWORK
//   403 Forbidden               a call other than SUBSCRIBE from a framework not     master
//                               subscribed; UPDATE_FRAMEWORK asking for something
//                               the framework is not authorized for
//   405 Method Not Allowed      not POST                                             http
//   406 Not Acceptable          Accept allows neither JSON nor protobuf (matters     codec
//                               for responses with a body: the SUBSCRIBE stream)
//   409 Conflict                UPDATE_FRAMEWORK of a framework removed meanwhile    master
//   415 Unsupported Media Type  Content-Type neither application/json nor            codec
//                               application/x-protobuf
//   501 Not Implemented         call type UNKNOWN (after the framework_id check)     codec
//   503 Service Unavailable     master still recovering                              master

namespace harvest::wire {
namespace {

using v1::scheduler::Call;

constexpr std::string_view kJsonType = "application/json";
constexpr std::string_view kProtobufType = "application/x-protobuf";

// ---- Small text helpers ------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && JsonReader::isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && JsonReader::isSpace(s.back())) s.remove_suffix(1);
  return s;
}

char lowerChar(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Media types are case-insensitive; comparing in place spares a lowered copy per request.
bool equalsIgnoreCase(std::string_view a, std::string_view lowercase) {
  if (a.size() != lowercase.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lowerChar(a[i]) != lowercase[i]) return false;
  }
  return true;
}

// The media type of a Content-Type or Accept element: before any ';', trimmed.
std::string_view mediaTypeOf(std::string_view value) {
  return trim(value.substr(0, value.find(';')));
}

// ---- Call checks ---------------------------------------------------------------------------

// Why a call is refused; checking a Call by reference leaves it where the caller put it (an
// arena, a reused message), which returning it by value would copy.
struct Refusal {
  HttpStatus status;
  std::string message;
};

Refusal badRequest(std::string message) {
  return {HttpStatus::kBadRequest, std::move(message)};
}

// Mesos's checks of a well-formed Call (master/validation.cpp, scheduler::call::validate):
// nothing here needs the master's state.
std::optional<Refusal> checkCall(const Call& call) {
  if (!call.has_type()) {
    return badRequest("call without 'type' (or of a type this master does not know)");
  }
  const std::string& typeName = Call::Type_Name(call.type());

  if (call.type() == Call::SUBSCRIBE) {
    if (!call.has_subscribe()) return badRequest("SUBSCRIBE call without 'subscribe'");
    // Compared by value as Mesos does: unset and set-to-empty are the same id.
    const std::string& infoId = call.subscribe().framework_info().id().value();
    if (infoId != call.framework_id().value()) {
      return badRequest("SUBSCRIBE call's 'framework_id' " +
                        quotedForError(call.framework_id().value()) +
                        " differs from 'subscribe.framework_info.id' " + quotedForError(infoId));
    }
    return std::nullopt;
  }

  if (!call.has_framework_id()) return badRequest(typeName + " call without 'framework_id'");

  const auto need = [&](bool present, const char* field) -> std::optional<Refusal> {
    if (present) return std::nullopt;
    return badRequest(typeName + " call without '" + field + "'");
  };
  const auto uuid16 = [&](const std::string& uuid, const char* field) -> std::optional<Refusal> {
    if (uuid.size() == 16) return std::nullopt;
    return badRequest(typeName + " call's '" + field + "' is " + std::to_string(uuid.size()) +
                      " bytes; a UUID is 16");
  };

  std::optional<Refusal> problem;
  switch (call.type()) {
    case Call::UNKNOWN:
      return Refusal{HttpStatus::kNotImplemented, "call type UNKNOWN is not implemented"};
    case Call::SUBSCRIBE:  // Handled above.
    case Call::TEARDOWN:
    case Call::REVIVE:
    case Call::SUPPRESS:
      break;
    case Call::ACCEPT:
      problem = need(call.has_accept(), "accept");
      break;
    case Call::DECLINE:
      problem = need(call.has_decline(), "decline");
      break;
    case Call::ACCEPT_INVERSE_OFFERS:
      problem = need(call.has_accept_inverse_offers(), "accept_inverse_offers");
      break;
    case Call::DECLINE_INVERSE_OFFERS:
      problem = need(call.has_decline_inverse_offers(), "decline_inverse_offers");
      break;
    case Call::KILL:
      problem = need(call.has_kill(), "kill");
      break;
    case Call::SHUTDOWN:
      problem = need(call.has_shutdown(), "shutdown");
      break;
    case Call::ACKNOWLEDGE:
      problem = need(call.has_acknowledge(), "acknowledge");
      if (!problem) problem = uuid16(call.acknowledge().uuid(), "acknowledge.uuid");
      break;
    case Call::ACKNOWLEDGE_OPERATION_STATUS: {
      const Call::AcknowledgeOperationStatus& ack = call.acknowledge_operation_status();
      problem = need(call.has_acknowledge_operation_status(), "acknowledge_operation_status");
      if (!problem) problem = uuid16(ack.uuid(), "acknowledge_operation_status.uuid");
      // Mesos needs the agent until operations on external resource providers exist.
      if (!problem) problem = need(ack.has_agent_id(), "acknowledge_operation_status.agent_id");
      break;
    }
    case Call::RECONCILE:
      problem = need(call.has_reconcile(), "reconcile");
      break;
    case Call::RECONCILE_OPERATIONS:
      problem = need(call.has_reconcile_operations(), "reconcile_operations");
      break;
    case Call::MESSAGE:
      problem = need(call.has_message(), "message");
      break;
    case Call::REQUEST:
      problem = need(call.has_request(), "request");
      break;
    case Call::UPDATE_FRAMEWORK: {
      problem = need(call.has_update_framework(), "update_framework");
      const std::string& infoId = call.update_framework().framework_info().id().value();
      if (!problem && infoId != call.framework_id().value()) {
        problem = badRequest("UPDATE_FRAMEWORK call's 'framework_id' " +
                             quotedForError(call.framework_id().value()) +
                             " differs from 'update_framework.framework_info.id' " +
                             quotedForError(infoId));
      }
      break;
    }
  }
  return problem;
}

}  // namespace

const char* mediaType(Format format) {
  return format == Format::kJson ? "application/json" : "application/x-protobuf";
}

HttpResult<Format> requestFormat(std::string_view contentType) {
  const std::string_view type = mediaTypeOf(contentType);
  if (type.empty()) {
    return HttpResult<Format>::error(HttpStatus::kBadRequest,
                                     "expecting a Content-Type header (application/json or "
                                     "application/x-protobuf)");
  }
  if (equalsIgnoreCase(type, kJsonType)) return Format::kJson;
  if (equalsIgnoreCase(type, kProtobufType)) return Format::kProtobuf;
  return HttpResult<Format>::error(HttpStatus::kUnsupportedMediaType,
                                   "Content-Type " + quotedForError(contentType) +
                                       " is neither application/json nor " +
                                       "application/x-protobuf");
}

HttpResult<Format> decodeCallInto(std::string_view contentType, std::string_view body,
                                  v1::scheduler::Call* call) {
  const auto refuse = [](Refusal refusal) {
    return HttpResult<Format>::error(refusal.status, std::move(refusal.message));
  };
  HttpResult<Format> format = requestFormat(contentType);
  if (!format.ok()) return format;

  if (*format == Format::kProtobuf) {
    if (body.size() > static_cast<size_t>(INT_MAX)) return refuse(badRequest("body too large"));
    // An empty view may have a null data(); protobuf wants a valid pointer even for 0 bytes.
    const char* data = body.empty() ? "" : body.data();
    if (!call->ParsePartialFromArray(data, static_cast<int>(body.size()))) {
      return refuse(badRequest("body is not a serialized Call protobuf"));
    }
    if (std::optional<std::string> field = firstNonUtf8Field(*call)) {
      return refuse(badRequest("string field '" + *field + "' is not UTF-8"));
    }
  } else {
    const Status read = readJsonMessage(body, call);
    if (!read.ok()) return refuse(badRequest(read.message()));
  }
  if (!call->IsInitialized()) {
    return refuse(
        badRequest("Call is missing required fields: " + call->InitializationErrorString()));
  }
  if (std::optional<Refusal> refusal = checkCall(*call)) return refuse(std::move(*refusal));
  return format;
}

HttpResult<v1::scheduler::Call> decodeCall(std::string_view contentType, std::string_view body) {
  Call call;
  HttpResult<Format> decoded = decodeCallInto(contentType, body, &call);
  if (!decoded.ok()) {
    return HttpResult<Call>::error(decoded.httpStatus(), decoded.message());
  }
  return call;
}

HttpResult<Format> responseFormat(std::string_view acceptHeader, Format requestFormat) {
  // Per format: the q of the most specific range that matches it (RFC 9110 12.5.1).
  struct Match {
    int specificity = -1;  // 0 */*, 1 application/*, 2 the exact type.
    double q = 0;
  };
  Match json;
  Match protobuf;
  bool anyRange = false;

  std::string_view rest = acceptHeader;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view element = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);

    const std::string_view range = mediaTypeOf(element);
    if (range.empty()) continue;
    anyRange = true;

    // A malformed or out-of-range q is ignored (q=1) rather than refusing the request.
    double q = 1;
    std::string_view params = element.substr(std::min(element.find(';'), element.size()));
    while (!params.empty()) {
      params.remove_prefix(1);  // ';'
      const size_t semicolon = params.find(';');
      const std::string_view param = trim(params.substr(0, semicolon));
      params = semicolon == std::string_view::npos ? std::string_view() : params.substr(semicolon);
      if (param.size() < 2 || !equalsIgnoreCase(param.substr(0, 2), "q=")) continue;
      const std::string_view number = trim(param.substr(2));
      double parsed = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
      if (ec == std::errc() && end == number.data() + number.size() && parsed >= 0 && parsed <= 1) {
        q = parsed;
      }
    }

    for (auto [type, match] : {std::pair{kJsonType, &json}, std::pair{kProtobufType, &protobuf}}) {
      const int specificity = equalsIgnoreCase(range, type)              ? 2
                              : equalsIgnoreCase(range, "application/*") ? 1
                              : range == "*/*"                           ? 0
                                                                         : -1;
      if (specificity < 0 || specificity < match->specificity) continue;
      match->q = specificity > match->specificity ? q : std::max(match->q, q);
      match->specificity = specificity;
    }
  }

  if (!anyRange) return requestFormat;
  const bool jsonOk = json.q > 0;
  const bool protobufOk = protobuf.q > 0;
  if (!jsonOk && !protobufOk) {
    return HttpResult<Format>::error(HttpStatus::kNotAcceptable,
                                     "Accept " + quotedForError(acceptHeader) +
                                         " allows neither application/json nor "
                                         "application/x-protobuf");
  }
  if (jsonOk && protobufOk && json.q == protobuf.q) return requestFormat;
  return json.q > protobuf.q ? Format::kJson : Format::kProtobuf;
}

void appendEvent(const v1::scheduler::Event& event, Format format, std::string* out) {
  if (!event.IsInitialized()) {
    // A master bug, not the framework's; still send what there is rather than crash.
    LOG(ERROR) << "Encoding an Event missing required fields: "
               << event.InitializationErrorString();
  }
  if (format == Format::kJson) {
    appendEventJson(event, out);
    return;
  }
  const size_t start = out->size();
  const size_t bytes = event.ByteSizeLong();
  out->resize(start + bytes);
  // ByteSizeLong() just cached the sizes this serializer needs; like SerializePartial*, it
  // does not insist on required fields.
  event.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out->data() + start));
}

std::string encodeEvent(const v1::scheduler::Event& event, Format format) {
  std::string encoded;
  appendEvent(event, format, &encoded);
  return encoded;
}

Result<std::optional<Duration>> taskDuration(const v1::TaskInfo& task) {
  using Out = Result<std::optional<Duration>>;
  const std::string where = "task " + quotedForError(task.task_id().value()) + ": label '" +
                            std::string(kDurationLabel) + "'";
  const std::string* text = nullptr;
  for (const v1::Label& label : task.labels().labels()) {
    if (label.key() != kDurationLabel) continue;
    if (text != nullptr && *text != label.value()) {
      return Out::invalidArgument(where + " is given twice, as " + quotedForError(*text) + " and " +
                                  quotedForError(label.value()));
    }
    text = &label.value();
  }
  if (text == nullptr) return std::optional<Duration>();

  // About 285 years, still well inside int64 nanoseconds after rounding.
  constexpr double kMaxSeconds = 9e9;
  double seconds = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [stop, ec] = std::from_chars(begin, end, seconds);
  // from_chars also reads "inf" and "nan"; those are not durations either.
  if (text->empty() || ec != std::errc() || stop != end || !std::isfinite(seconds) || seconds < 0) {
    return Out::invalidArgument(where + " is " + quotedForError(*text) +
                                ", not a non-negative number of seconds");
  }
  if (seconds > kMaxSeconds)
    return Out::invalidArgument(where + " is " + quotedForError(*text) + ", too large");
  return std::optional<Duration>(Duration::secondsDouble(seconds));
}

}  // namespace harvest::wire
