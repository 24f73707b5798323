// Operator calls (POST /api/v1) as the master reads them: strict one-pass JSON
// (wire/call_json.h) or protobuf into a v1 master Call, from any client that can reach it.
//
// The first byte picks a JSON or a protobuf body. Beyond "no crash": the two encodings read
// the same calls, map fields (UPDATE_QUOTA's guarantees and limits) included. A JSON call that
// is read survives its protobuf encoding unchanged, and a protobuf call, printed by
// protobuf's own JSON printer, is read back as the same call.
#include <google/protobuf/util/json_util.h>

#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "protos/master_api.pb.h"
#include "wire/call_json.h"
#include "wire/utf8_fields.h"

namespace {

using harvest::fuzz::fail;
using harvest::fuzz::sameMessage;
using harvest::v1::master::Call;

void jsonBody(std::string_view body) {
  Call call;
  if (!harvest::wire::readJsonMessage(body, &call).ok()) return;
  Call binary;
  if (!binary.ParsePartialFromString(call.SerializePartialAsString())) {
    fail("a JSON call read does not parse back from its protobuf encoding");
  }
  if (!sameMessage(binary, call)) fail("a JSON call changes in its protobuf encoding");
}

void protobufBody(std::string_view body) {
  Call call;
  // The API refuses a call missing required fields before anything reads it (and protobuf's
  // printer cannot print one).
  if (!call.ParsePartialFromArray(body.data(), static_cast<int>(body.size())) ||
      !call.IsInitialized()) {
    return;
  }
  // The API refuses strings that are not UTF-8 (they have no JSON form); every call it takes
  // must print as JSON.
  if (harvest::wire::firstNonUtf8Field(call)) return;
  // Unknown fields have no JSON form; the rest must survive.
  call.DiscardUnknownFields();
  for (bool protoNames : {true, false}) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = protoNames;
    if (!google::protobuf::util::MessageToJsonString(call, &json, options).ok()) {
      fail("a protobuf call the API takes has no JSON form");
    }
    Call text;
    const harvest::Status read = harvest::wire::readJsonMessage(json, &text);
    if (!read.ok()) fail("a protobuf call is refused as JSON: " + read.message() + "\n" + json);
    if (!sameMessage(text, call)) fail("a protobuf call changes in its JSON encoding:\n" + json);
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
  if (data[0] % 2 == 0) {
    jsonBody(rest);
  } else {
    protobufBody(rest);
  }
  return 0;
}
