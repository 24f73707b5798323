// Decoding scheduler Calls as the master receives them: the JSON a framework library sends and
// the same Call in protobuf. Per call, so the figure compares with the master's CPU per call.
#include <benchmark/benchmark.h>

#include <string>

#include "wire/scheduler_codec.h"

namespace harvest::wire {
namespace {

// An ACCEPT launching one task with cpus, mem and a port range, as JSON framework libraries
// write it (proto names, int64 as strings, base64 bytes absent).
const std::string kAccept = R"({
  "framework_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001"},
  "type": "ACCEPT",
  "accept": {
    "offer_ids": [{"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-O12345"}],
    "operations": [{
      "type": "LAUNCH",
      "launch": {"task_infos": [{
        "name": "web-42",
        "task_id": {"value": "web-42-7d9c"},
        "agent_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-S7"},
        "resources": [
          {"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}},
          {"name": "mem", "type": "SCALAR", "scalar": {"value": 256}},
          {"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": "31000", "end": "31001"}]}}
        ],
        "command": {"value": "sleep 100", "shell": true}
      }]}
    }],
    "filters": {"refuse_seconds": 5.0}
  }
})";

const std::string kDecline = R"({
  "framework_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001"},
  "type": "DECLINE",
  "decline": {
    "offer_ids": [{"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-O12346"}],
    "filters": {"refuse_seconds": 3600.0}
  }
})";

const std::string kAcknowledge = R"({
  "framework_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001"},
  "type": "ACKNOWLEDGE",
  "acknowledge": {
    "agent_id": {"value": "3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-S7"},
    "task_id": {"value": "web-42-7d9c"},
    "uuid": "jhadf73jhakdlfha723adf=="
  }
})";

void decode(benchmark::State& state, const std::string& body, std::string_view type) {
  for (auto _ : state) {
    HttpResult<v1::scheduler::Call> call = decodeCall(type, body);
    if (!call.ok()) state.SkipWithError(call.message().c_str());
    benchmark::DoNotOptimize(call);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}

std::string binaryOf(const std::string& json) {
  return decodeCall("application/json", json).value().SerializeAsString();
}

void BM_DecodeJson_Accept(benchmark::State& s) {
  decode(s, kAccept, "application/json");
}
void BM_DecodeJson_Decline(benchmark::State& s) {
  decode(s, kDecline, "application/json");
}
void BM_DecodeJson_Acknowledge(benchmark::State& s) {
  decode(s, kAcknowledge, "application/json");
}
void BM_DecodeProtobuf_Accept(benchmark::State& s) {
  decode(s, binaryOf(kAccept), "application/x-protobuf");
}
BENCHMARK(BM_DecodeJson_Accept);
BENCHMARK(BM_DecodeJson_Decline);
BENCHMARK(BM_DecodeJson_Acknowledge);
BENCHMARK(BM_DecodeProtobuf_Accept);

}  // namespace
}  // namespace harvest::wire
