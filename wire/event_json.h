// Events as JSON, the way Mesos writes them (see event_json.cpp).
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace harvest::wire {

std::string eventToJson(const google::protobuf::Message& event);

}  // namespace harvest::wire
