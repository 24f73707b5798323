// What the web UI asks of a master of 10,000 agents (the live web UI test's cluster: every agent
// cpus:16;mem:65536;disk:100000, no frameworks): GET /master/state's body, which the pages read,
// and the first record of the operator API's SUBSCRIBE stream, the whole state again, which
// each page opens for live updates. The "bytes" counters are the sizes, so a change that writes
// faster can be seen to write the same amount.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "master/network/network_master.h"
#include "net/http_client.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"

namespace harvest::master {
namespace {

std::unique_ptr<NetworkMaster> masterOfAgents(benchmark::State& state, int agents) {
  NetworkOptions network;
  network.port = 0;
  Result<std::unique_ptr<NetworkMaster>> started = NetworkMaster::start(network, MasterOptions{});
  if (!started.ok()) {
    state.SkipWithError(started.message().c_str());
    return nullptr;
  }
  std::unique_ptr<NetworkMaster> master = std::move(started).value();
  const Resources total = parseResources("cpus:16;mem:65536;disk:100000").value();
  for (int i = 0; i < agents; ++i) {
    char id[24];
    std::snprintf(id, sizeof id, "agent-%05d", i);
    if (!sim::addSimulatedAgent(master->master(), id, total).ok()) {
      state.SkipWithError("an agent was refused");
      return nullptr;
    }
  }
  return master;
}

void MasterState(benchmark::State& state) {
  std::unique_ptr<NetworkMaster> master = masterOfAgents(state, static_cast<int>(state.range(0)));
  if (master == nullptr) return;
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string body = master->masterStateJson();
    bytes = body.size();
    benchmark::DoNotOptimize(body.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(MasterState)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// From SUBSCRIBE sent to its SUBSCRIBED record read whole, over loopback, with the master
// serving on its own thread: the state gathered, encoded (JSON or protobuf, as the Accept
// header asks) and sent.
void OperatorSubscribe(benchmark::State& state) {
  std::unique_ptr<NetworkMaster> master = masterOfAgents(state, static_cast<int>(state.range(0)));
  if (master == nullptr) return;
  const bool json = state.range(1) == 0;
  std::atomic<bool> stop{false};
  std::thread serving([&] { master->run(stop); });
  const Duration timeout = Duration::seconds(30);
  size_t bytes = 0;
  for (auto _ : state) {
    Result<http::Connection> connection =
        http::Connection::connect("127.0.0.1", master->port(), timeout);
    if (!connection.ok()) {
      state.SkipWithError(connection.message().c_str());
      break;
    }
    Result<http::StreamReader> reader =
        http::StreamReader::open(std::move(connection).value(), "POST", "/api/v1",
                                 {{"Content-Type", "application/json"},
                                  {"Accept", json ? "application/json" : "application/x-protobuf"}},
                                 "{\"type\":\"SUBSCRIBE\"}", timeout);
    if (!reader.ok() || reader.value().head().status != 200) {
      state.SkipWithError("SUBSCRIBE was refused");
      break;
    }
    http::StreamReader stream = std::move(reader).value();
    // RecordIO: "<length>\n<record>"; the record may span chunks.
    std::string received;
    size_t newline = std::string::npos;
    while (newline == std::string::npos ||
           received.size() < newline + 1 + std::stoull(received.substr(0, newline))) {
      Result<std::optional<std::string>> chunk = stream.nextChunk(timeout);
      if (!chunk.ok() || !chunk.value()) {
        state.SkipWithError("the stream ended before SUBSCRIBED");
        break;
      }
      received += *chunk.value();
      newline = received.find('\n');
    }
    bytes = received.size();
    stream.close();
  }
  stop = true;
  serving.join();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(OperatorSubscribe)
    ->ArgNames({"agents", "protobuf"})
    ->Args({10'000, 0})
    ->Args({10'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace harvest::master
