// Operator-side HTTP for tests: one request on a fresh connection, and the master's
// /master/state (Mesos's shape) and /metrics/snapshot read back as values to compare exactly.
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

// /master/state.
Struct state(uint16_t port, const http::Headers& auth = {});

// The entries of the list `kind` of an object ("slaves", "frameworks", "completed_frameworks"
// of /master/state; "tasks", "offers" of a framework).
std::vector<Struct> entries(const Struct& state, const std::string& kind);

// /master/state's lists nested in its frameworks: every framework's "tasks", "offers", and
// "completed_tasks" (of the completed frameworks too).
std::vector<Struct> tasks(const Struct& state);
std::vector<Struct> offers(const Struct& state);
std::vector<Struct> completedTasks(const Struct& state);

std::string field(const Struct& entry, const std::string& name);

bool flag(const Struct& entry, const std::string& name);

// A number field; NaN when it is missing (a failure).
double number(const Struct& entry, const std::string& name);

// An object field (a resources object, "allocation_info"); empty when missing (a failure).
Struct object(const Struct& entry, const std::string& name);

// The framework's entry in /master/state: among its frameworks, or its completed ones.
std::optional<Struct> frameworkInState(uint16_t port, const std::string& id,
                                       const http::Headers& auth = {});

std::string toJson(const google::protobuf::Message& message);

http::Headers basicAuth(const std::string& principal, const std::string& secret);

}  // namespace harvest::testkit
