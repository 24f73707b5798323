// The harvest-agent protocol (agent/runtime/agent_wire.h): agent calls as the master parses
// them from the network, and RUN_TASK events as an agent parses them from the master.
//
// The first byte picks the message: odd, an AgentCall (REGISTER, STATUS, FREED); even, an
// AgentEvent (RUN_TASK). The rest is its protobuf encoding. Beyond "no crash": what decodes
// encodes to a message that decodes again, and from then on the conversion is a fixed point
// (the encoding of a decoded message decodes and encodes to the same bytes).
#include <cstdint>
#include <string>

#include "agent/runtime/agent_wire.h"
#include "fuzz/fuzz_support.h"

namespace {

using harvest::fuzz::fail;
namespace agent = harvest::agent;
namespace v1 = harvest::v1;

std::string bytesOf(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

// decode(encode(decoded)) must succeed, and encode it to the same bytes again.
template <typename Decode, typename Encode>
void fixedPoint(const char* what, const v1::AgentCall& call, Decode decode, Encode encode) {
  auto decoded = decode(call);
  if (!decoded.ok()) return;
  const auto once = encode(*decoded);
  auto again = decode(once);
  if (!again.ok()) fail(std::string(what) + ": its own encoding is refused: " + again.message());
  if (bytesOf(encode(*again)) != bytesOf(once)) fail(std::string(what) + ": not a fixed point");
}

void agentCall(const v1::AgentCall& call) {
  const std::string& id = call.agent_id().value();
  const uint64_t sequence = call.sequence();
  fixedPoint("REGISTER", call, agent::registrationFromCall,
             [](const agent::AgentRegistration& r) { return agent::registerCall(r); });
  fixedPoint("STATUS", call, agent::statusFromCall, [&](const agent::TaskStatus& status) {
    return agent::statusCall(id, sequence, status, call.status().holds_resources());
  });
  fixedPoint("FREED", call, agent::freedFromCall,
             [&](const agent::Freed& freed) { return agent::freedCall(id, sequence, freed); });
}

void agentEvent(const v1::AgentEvent& event) {
  auto run = agent::runTaskFromEvent(event);
  if (!run.ok()) return;
  const std::string& agentId = event.run_task().task().agent_id().value();
  const v1::AgentEvent once = agent::runTaskEvent(*run, agentId);
  auto again = agent::runTaskFromEvent(once);
  if (!again.ok()) fail("RUN_TASK: its own encoding is refused: " + again.message());
  if (bytesOf(agent::runTaskEvent(*again, agentId)) != bytesOf(once)) {
    fail("RUN_TASK: not a fixed point");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int length = static_cast<int>(size - 1);
  if (data[0] % 2 == 1) {
    v1::AgentCall call;
    if (call.ParseFromArray(data + 1, length)) agentCall(call);
  } else {
    v1::AgentEvent event;
    if (event.ParseFromArray(data + 1, length)) agentEvent(event);
  }
  return 0;
}
