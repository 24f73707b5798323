// Scheduler calls (wire/scheduler_codec.h), JSON and protobuf, as POST /api/v1/scheduler
// receives them from any client that can reach the master.
//
// The first byte picks what the rest is: a JSON body, a protobuf body, or a Content-Type /
// Accept header. Beyond "no crash": the two encodings accept the same calls. A JSON call the
// codec accepts is accepted unchanged as protobuf, and a protobuf call it accepts, printed
// as JSON with the .proto's field names, is accepted back as the same call.
#include <google/protobuf/util/json_util.h>

#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "wire/scheduler_codec.h"

namespace {

using harvest::fuzz::fail;
using harvest::fuzz::sameMessage;
using harvest::v1::scheduler::Call;
using harvest::wire::decodeCall;

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kProtobuf = "application/x-protobuf";

void jsonBody(std::string_view body) {
  auto call = decodeCall(kJson, body);
  if (!call.ok()) {
    if (call.httpCode() != 400 && call.httpCode() != 501) {
      fail("JSON refused with " + call.message());
    }
    return;
  }
  auto binary = decodeCall(kProtobuf, call->SerializeAsString());
  if (!binary.ok()) fail("a JSON call accepted is refused as protobuf: " + binary.message());
  if (!sameMessage(*binary, *call)) fail("a JSON call changes in its protobuf encoding");
}

void protobufBody(std::string_view body) {
  auto call = decodeCall(kProtobuf, body);
  if (!call.ok()) return;
  // Unknown fields have no JSON form; the rest must survive.
  Call known = *call;
  known.DiscardUnknownFields();
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(known, &json, options).ok()) return;
  auto text = decodeCall(kJson, json);
  if (!text.ok()) {
    fail("a protobuf call accepted is refused as JSON: " + text.message() + "\n" + json);
  }
  if (!sameMessage(*text, known)) fail("a protobuf call changes in its JSON encoding:\n" + json);
}

void headers(std::string_view value) {
  auto request = harvest::wire::requestFormat(value);
  if (!request.ok() && request.httpCode() != 400 && request.httpCode() != 415) {
    fail("Content-Type refused with " + request.message());
  }
  for (auto format : {harvest::wire::Format::kJson, harvest::wire::Format::kProtobuf}) {
    auto response = harvest::wire::responseFormat(value, format);
    if (!response.ok() && response.httpCode() != 406) {
      fail("Accept refused with " + response.message());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = harvest::fuzz::asText(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      jsonBody(rest);
      break;
    case 1:
      protobufBody(rest);
      break;
    default:
      headers(rest);
      break;
  }
  return 0;
}
