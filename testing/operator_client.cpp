#include "testing/operator_client.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <limits>

#include "net/basic_auth.h"
#include "testing/common.h"

namespace harvest::testkit {

http::ClientResponse request(uint16_t port, std::string_view method, std::string_view target,
                             const http::Headers& headers, std::string_view body) {
  Result<http::Connection> connection = http::Connection::connect(kHost, port, kTimeout);
  if (!connection.ok()) {
    ADD_FAILURE() << connection.message();
    return {};
  }
  http::Connection open = std::move(connection).value();
  Result<http::ClientResponse> response = open.request(method, target, headers, body, kTimeout);
  if (!response.ok()) {
    ADD_FAILURE() << response.message();
    return {};
  }
  return std::move(response).value();
}

Struct parseJson(const std::string& text) {
  Struct out;
  const auto status = google::protobuf::util::JsonStringToMessage(text, &out);
  EXPECT_TRUE(status.ok()) << status.message() << " in " << text;
  return out;
}

std::map<std::string, double> metrics(uint16_t port, const http::Headers& auth) {
  const http::ClientResponse response = request(port, "GET", "/metrics/snapshot", auth);
  EXPECT_EQ(response.status, 200) << response.body;
  std::map<std::string, double> out;
  const Struct snapshot = parseJson(response.body);  // Outlives the loop over its fields.
  for (const auto& [key, value] : snapshot.fields()) {
    EXPECT_EQ(value.kind_case(), google::protobuf::Value::kNumberValue) << key;
    out[key] = value.number_value();
  }
  return out;
}

Struct state(uint16_t port, const http::Headers& auth) {
  const http::ClientResponse response = request(port, "GET", "/master/state", auth);
  EXPECT_EQ(response.status, 200) << response.body;
  return parseJson(response.body);
}

std::vector<Struct> entries(const Struct& state, const std::string& kind) {
  std::vector<Struct> out;
  auto it = state.fields().find(kind);
  if (it == state.fields().end()) {
    ADD_FAILURE() << "no list '" << kind << "'";
    return out;
  }
  for (const google::protobuf::Value& value : it->second.list_value().values()) {
    out.push_back(value.struct_value());
  }
  return out;
}

namespace {

std::vector<Struct> nested(const Struct& state, const std::vector<std::string>& frameworkLists,
                           const std::string& kind) {
  std::vector<Struct> out;
  for (const std::string& list : frameworkLists) {
    for (const Struct& framework : entries(state, list)) {
      for (Struct& entry : entries(framework, kind)) out.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace

std::vector<Struct> tasks(const Struct& state) {
  return nested(state, {"frameworks"}, "tasks");
}

std::vector<Struct> offers(const Struct& state) {
  return nested(state, {"frameworks"}, "offers");
}

std::vector<Struct> completedTasks(const Struct& state) {
  return nested(state, {"frameworks", "completed_frameworks"}, "completed_tasks");
}

double number(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  if (it == entry.fields().end() ||
      it->second.kind_case() != google::protobuf::Value::kNumberValue) {
    ADD_FAILURE() << "no number '" << name << "'";
    return std::numeric_limits<double>::quiet_NaN();
  }
  return it->second.number_value();
}

Struct object(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  if (it == entry.fields().end() ||
      it->second.kind_case() != google::protobuf::Value::kStructValue) {
    ADD_FAILURE() << "no object '" << name << "'";
    return {};
  }
  return it->second.struct_value();
}

std::string field(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  return it == entry.fields().end() ? "<missing>" : it->second.string_value();
}

bool flag(const Struct& entry, const std::string& name) {
  auto it = entry.fields().find(name);
  EXPECT_NE(it, entry.fields().end()) << name;
  return it != entry.fields().end() && it->second.bool_value();
}

std::optional<Struct> frameworkInState(uint16_t port, const std::string& id,
                                       const http::Headers& auth) {
  const Struct listed = state(port, auth);
  for (const char* list : {"frameworks", "completed_frameworks"}) {
    for (const Struct& framework : entries(listed, list)) {
      if (field(framework, "id") == id) return framework;
    }
  }
  return std::nullopt;
}

std::string toJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  CHECK(status.ok()) << status.message();
  return out;
}

http::Headers basicAuth(const std::string& principal, const std::string& secret) {
  return {{"Authorization", http::basicAuthorization({principal, secret})}};
}

}  // namespace harvest::testkit
