// Every string field of a message read from the network is UTF-8.
//
// Binary proto2 does not check this and JSON cannot carry anything else, so a check here keeps
// both encodings to the same set of calls. It also keeps the master's state printable: a
// hostname, id or label stored from a protobuf call reappears in /master/state and in JSON
// events, where ill-formed UTF-8 would make the whole document unreadable to every client.
#pragma once

#include <google/protobuf/message.h>

#include <optional>
#include <string>

namespace harvest::wire {

// The path ("field.inner.name") of the first string (not bytes) field of `message` that is
// not well-formed UTF-8, or nullopt when all are.
std::optional<std::string> firstNonUtf8Field(const google::protobuf::Message& message);

}  // namespace harvest::wire
