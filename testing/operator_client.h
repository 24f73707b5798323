// Operator-side HTTP for tests: one request on a fresh connection, and the master's /state and
// /metrics/snapshot read back as values to compare exactly.
#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/struct.pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_client.h"

namespace harvest::testkit {

using google::protobuf::Struct;

// One request on a fresh connection; status 0 when the exchange itself failed.
http::ClientResponse request(uint16_t port, std::string_view method, std::string_view target,
                             const http::Headers& headers = {}, std::string_view body = {});

Struct parseJson(const std::string& text);

// /metrics/snapshot, checked to be one flat object of numbers.
std::map<std::string, double> metrics(uint16_t port, const http::Headers& auth = {});

Struct state(uint16_t port, const http::Headers& auth = {});

// The entries of /state's list `kind` ("agents", "frameworks", "offers", "tasks").
std::vector<Struct> entries(const Struct& state, const std::string& kind);

std::string field(const Struct& entry, const std::string& name);

bool flag(const Struct& entry, const std::string& name);

std::optional<Struct> frameworkInState(uint16_t port, const std::string& id,
                                       const http::Headers& auth = {});

std::string toJson(const google::protobuf::Message& message);

http::Headers basicAuth(const std::string& principal, const std::string& secret);

}  // namespace harvest::testkit
