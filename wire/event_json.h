// Events as JSON, the way Mesos writes them (see event_json.cpp).
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace harvest::wire {

std::string eventToJson(const google::protobuf::Message& event);
// The same JSON appended to `out`: a caller reusing one buffer skips the string's regrowth.
void appendEventJson(const google::protobuf::Message& event, std::string* out);

}  // namespace harvest::wire
