// Decoding scheduler Calls as the master receives them: the JSON a framework library sends and
// the same Call in protobuf. Per call, so the figure compares with the master's CPU per call.
// Each decode runs three ways: into a fresh heap Call (decodeCall), into a Call on a protobuf
// Arena whose first block is kept between calls, and into one Call cleared between calls
// (CallDecoder). allocs_per_call counts operator new calls (allocation_counter.h).
#include <benchmark/benchmark.h>
#include <google/protobuf/arena.h>

#include <optional>
#include <string>

#include "allocation_counter.h"
#include "wire/call_decoder.h"
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

enum Placement { kFreshHeap, kArena, kReusedMessage };

void decode(benchmark::State& state, const std::string& body, std::string_view type) {
  const auto placement = static_cast<Placement>(state.range(0));
  alignas(8) static char firstBlock[16 * 1024];
  google::protobuf::ArenaOptions options;
  options.initial_block = firstBlock;
  options.initial_block_size = sizeof(firstBlock);
  google::protobuf::Arena arena(options);
  CallDecoder decoder;
  const uint64_t before = bench::allocationsSoFar();
  for (auto _ : state) {
    const v1::scheduler::Call* decoded = nullptr;
    std::optional<HttpResult<Format>> result;
    std::optional<HttpResult<v1::scheduler::Call>> fresh;
    if (placement == kFreshHeap) {
      fresh.emplace(decodeCall(type, body));
      if (!fresh->ok()) state.SkipWithError(fresh->message().c_str());
      decoded = &fresh->value();
    } else if (placement == kArena) {
      arena.Reset();
      auto* call = google::protobuf::Arena::CreateMessage<v1::scheduler::Call>(&arena);
      result.emplace(decodeCallInto(type, body, call));
      decoded = call;
    } else {
      result.emplace(decoder.decode(type, body));
      decoded = &decoder.call();
    }
    if (result && !result->ok()) state.SkipWithError(result->message().c_str());
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["allocs_per_call"] = static_cast<double>(bench::allocationsSoFar() - before) /
                                      static_cast<double>(state.iterations());
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

void placements(benchmark::internal::Benchmark* b) {
  b->ArgName("placement")->Arg(kFreshHeap)->Arg(kArena)->Arg(kReusedMessage);
}
BENCHMARK(BM_DecodeJson_Accept)->Apply(placements);
BENCHMARK(BM_DecodeJson_Decline)->Apply(placements);
BENCHMARK(BM_DecodeJson_Acknowledge)->Apply(placements);
BENCHMARK(BM_DecodeProtobuf_Accept)->Apply(placements);

// An OFFERS event of ten offers (cpus, mem, ports each) as the master sends it: encoded into a
// fresh string (encodeEvent) or appended to one buffer kept between events (appendEvent).
v1::scheduler::Event offersEvent() {
  v1::scheduler::Event event;
  event.set_type(v1::scheduler::Event::OFFERS);
  for (int i = 0; i < 10; ++i) {
    v1::Offer& offer = *event.mutable_offers()->add_offers();
    offer.mutable_id()->set_value("3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-O" + std::to_string(i));
    offer.mutable_framework_id()->set_value("3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-0001");
    offer.mutable_agent_id()->set_value("3c5f5e05-1b2c-4f6e-9f5a-5b7e3f1d2a9c-S" +
                                        std::to_string(i));
    offer.set_hostname("agent-" + std::to_string(i) + ".example.org");
    for (const char* name : {"cpus", "mem"}) {
      v1::Resource& resource = *offer.add_resources();
      resource.set_name(name);
      resource.set_type(v1::Value::SCALAR);
      resource.mutable_scalar()->set_value(8);
    }
    v1::Resource& ports = *offer.add_resources();
    ports.set_name("ports");
    ports.set_type(v1::Value::RANGES);
    v1::Value::Range& range = *ports.mutable_ranges()->add_range();
    range.set_begin(31000);
    range.set_end(32000);
    offer.mutable_allocation_info()->set_role("web");
  }
  return event;
}

void BM_EncodeOffers(benchmark::State& state) {
  const auto format = static_cast<Format>(state.range(0));
  const bool reuse = state.range(1) != 0;
  const v1::scheduler::Event event = offersEvent();
  std::string buffer;
  const uint64_t before = bench::allocationsSoFar();
  for (auto _ : state) {
    if (reuse) {
      buffer.clear();
      appendEvent(event, format, &buffer);
      benchmark::DoNotOptimize(buffer.data());
    } else {
      std::string encoded = encodeEvent(event, format);
      benchmark::DoNotOptimize(encoded.data());
    }
  }
  state.counters["allocs_per_event"] = static_cast<double>(bench::allocationsSoFar() - before) /
                                       static_cast<double>(state.iterations());
}
BENCHMARK(BM_EncodeOffers)
    ->ArgNames({"protobuf", "reused"})
    ->Args({static_cast<int>(Format::kJson), 0})
    ->Args({static_cast<int>(Format::kJson), 1})
    ->Args({static_cast<int>(Format::kProtobuf), 0})
    ->Args({static_cast<int>(Format::kProtobuf), 1});

}  // namespace
}  // namespace harvest::wire
