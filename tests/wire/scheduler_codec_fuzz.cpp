// Mutation fuzzer for decodeCall (and responseFormat), without libFuzzer: gcc has none, so this
// is a plain program that ctest runs. It mutates a corpus of valid JSON and binary calls with a
// seeded PRNG (byte flips, truncations, splices, inserted nulls / brackets / quotes, deletions,
// duplications) and feeds every mutant to both content types. Run under ASan+UBSan
// (HARVEST_SANITIZE=ON) it finds memory errors and UB; in any build it checks that the decoder
// never crashes and that what it accepts is self-consistent: an accepted call serializes and
// decodes back to the same call.
//
//   scheduler_codec_fuzz [iterations = 20000] [seed = 1]
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "wire/scheduler_codec.h"

namespace {

using harvest::v1::scheduler::Call;
using harvest::wire::decodeCall;
using harvest::wire::Format;
using harvest::wire::HttpResult;
using harvest::wire::responseFormat;

// Valid calls of every type, in the shapes clients send.
const char* const kJsonCorpus[] = {
    R"({"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"foo","name":"Example",
       "roles":["test1","test2"],"capabilities":[{"type":"MULTI_ROLE"},
       {"type":"REVOCABLE_RESOURCES"}],"failover_timeout":604800},"suppressed_roles":["test2"]}})",
    R"({"framework_id":{"value":"12220-3440-12532-2345"},"type":"TEARDOWN"})",
    R"({"framework_id":{"value":"f"},"type":"ACCEPT","accept":{"offer_ids":[{"value":"o1"}],
       "operations":[{"type":"LAUNCH","launch":{"task_infos":[{"name":"My Task",
       "task_id":{"value":"t1"},"agent_id":{"value":"a1"},"executor":{"command":{"shell":true,
       "value":"sleep 1000"},"executor_id":{"value":"e1"}},"resources":[{"allocation_info":
       {"role":"eng"},"name":"cpus","role":"*","type":"SCALAR","scalar":{"value":1.0}},
       {"name":"ports","type":"RANGES","ranges":{"range":[{"begin":31000,"end":31005}]}}],
       "labels":{"labels":[{"key":"harvest.duration_seconds","value":"30"}]}}]}}],
       "filters":{"refuse_seconds":5.0}}})",
    R"({"framework_id":{"value":"f"},"type":"ACCEPT","accept":{"offer_ids":[{"value":"o2"}],
       "operations":[{"type":"LAUNCH_GROUP","launch_group":{"executor":{"type":"DEFAULT",
       "executor_id":{"value":"g"}},"task_group":{"tasks":[{"name":"a","task_id":{"value":"a"},
       "agent_id":{"value":"s"}}]}}},{"type":"RESERVE","reserve":{"resources":[{"name":"disk",
       "type":"SCALAR","scalar":{"value":64},"reservations":[{"type":"DYNAMIC","role":"eng"}]}]}},
       {"type":"CREATE","create":{"volumes":[{"name":"disk","type":"SCALAR","scalar":{"value":64},
       "disk":{"persistence":{"id":"v"},"volume":{"container_path":"d","mode":"RW"}}}]}}]}})",
    R"({"framework_id":{"value":"f"},"type":"DECLINE","decline":{"offer_ids":[{"value":"o1"},
       {"value":"o2"}],"filters":{"refuse_seconds":0.5}}})",
    R"({"framework_id":{"value":"f"},"type":"ACCEPT_INVERSE_OFFERS","accept_inverse_offers":
       {"inverse_offer_ids":[{"value":"i"}]}})",
    R"({"frameworkId":{"value":"f"},"type":"REVIVE","revive":{"roles":["eng"]}})",
    R"({"framework_id":{"value":"f"},"type":"SUPPRESS","suppress":{"roles":null}})",
    R"({"framework_id":{"value":"f"},"type":"KILL","kill":{"task_id":{"value":"t"},
       "agent_id":{"value":"a"},"kill_policy":{"grace_period":{"nanoseconds":"5000000000"}}}})",
    R"({"framework_id":{"value":"f"},"type":"SHUTDOWN","shutdown":{"executor_id":{"value":"e"},
       "agent_id":{"value":"a"}}})",
    R"({"framework_id":{"value":"f"},"type":"ACKNOWLEDGE","acknowledge":{"agent_id":
       {"value":"a"},"task_id":{"value":"t"},"uuid":"jhadf73jhakdlfha723adf"}})",
    R"({"framework_id":{"value":"f"},"type":"RECONCILE","reconcile":{"tasks":[{"task_id":
       {"value":"312325"},"agent_id":{"value":"123535"}}]}})",
    R"({"framework_id":{"value":"f"},"type":"MESSAGE","message":{"agent_id":{"value":"a"},
       "executor_id":{"value":"e"},"data":"adaf838jahd748jnaldf"}})",
    R"({"framework_id":{"value":"f"},"type":"REQUEST","request":{"requests":[{"agent_id":
       {"value":"a"},"resources":[{"name":"mem","type":"SCALAR","scalar":{"value":128}}]}]}})",
    R"({"framework_id":{"value":"f"},"type":"UPDATE_FRAMEWORK","update_framework":{
       "framework_info":{"user":"u","name":"n","id":{"value":"f"},"roles":["a"]},
       "suppressed_roles":["a"]}})",
    R"({"framework_id":{"value":"f\u00e9\ud83d\ude00\"\\"},"type":"TEARDOWN","x":[1,-2.5e3,
       true,false,null,{"y":[]}]})",
};

// Fragments worth splicing in: JSON structure, nulls, deep nesting, protobuf wire bytes.
// clang-format off
const std::string_view kTokens[] = {
    "{", "}", "[", "]", "\"", ":", ",", "null", "\\", "\\u", "\\ud800", "0", "-", "1e999",
    std::string_view("\0", 1), "\xff", "\xc3", "[[[[[[[[[[[[[[[[", "{\"a\":{\"a\":{\"a\":",
    "\"type\":\"UNKNOWN\"", "\"framework_id\":null", "\x08\x03", std::string_view("\x12\x00", 2),
    "\x0a\x7f"};
// clang-format on

std::string mutate(std::string input, const std::vector<std::string>& corpus,
                   std::mt19937_64& rng) {
  const auto below = [&rng](size_t n) {
    return n == 0 ? size_t{0} : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  const int rounds = 1 + static_cast<int>(below(4));
  for (int round = 0; round < rounds; ++round) {
    switch (below(8)) {
      case 0:  // Flip a byte to any value.
        if (!input.empty()) input[below(input.size())] = static_cast<char>(below(256));
        break;
      case 1:  // Flip one bit.
        if (!input.empty()) input[below(input.size())] ^= static_cast<char>(1 << below(8));
        break;
      case 2:  // Truncate.
        input.resize(below(input.size() + 1));
        break;
      case 3: {  // Splice: our prefix, another input's suffix.
        const std::string& other = corpus[below(corpus.size())];
        input = input.substr(0, below(input.size() + 1)) + other.substr(below(other.size() + 1));
        break;
      }
      case 4:  // Insert a token.
      case 5: {
        const std::string_view token = kTokens[below(std::size(kTokens))];
        input.insert(below(input.size() + 1), token);
        break;
      }
      case 6: {  // Delete a range.
        const size_t at = below(input.size() + 1);
        input.erase(at, below(16));
        break;
      }
      case 7: {  // Duplicate a range in place.
        const size_t at = below(input.size() + 1);
        input.insert(at, input.substr(at, below(32)));
        break;
      }
    }
  }
  return input;
}

// An accepted call must be stable: its binary form decodes to the same call.
bool consistent(const Call& call, const std::string& input) {
  const HttpResult<Call> again = decodeCall("application/x-protobuf", call.SerializeAsString());
  if (again.ok() && google::protobuf::util::MessageDifferencer::Equals(call, *again)) return true;
  std::fprintf(stderr, "accepted call does not round-trip (%s)\ninput: %s\ncall: %s\n",
               again.ok() ? "differs" : again.message().c_str(), input.c_str(),
               call.ShortDebugString().c_str());
  return false;
}

}  // namespace

// Protobuf's generated code logs every non-UTF-8 string it parses in debug builds; mutants are
// full of them, and the decoder refuses them anyway.
void quiet(google::protobuf::LogLevel, const char*, int, const std::string&) {}

int main(int argc, char** argv) {
  google::protobuf::SetLogHandler(&quiet);
  const long iterations = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 20000;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  std::mt19937_64 rng(seed);

  // The corpus: every JSON call, and the binary form of each (checking they are valid).
  std::vector<std::string> corpus;
  for (const char* json : kJsonCorpus) {
    const HttpResult<Call> call = decodeCall("application/json", json);
    if (!call.ok()) {
      std::fprintf(stderr, "corpus entry refused: %s\n%s\n", call.message().c_str(), json);
      return 1;
    }
    corpus.emplace_back(json);
    corpus.push_back(call->SerializeAsString());
  }

  long accepted[2] = {0, 0};
  const std::string_view types[2] = {"application/json", "application/x-protobuf"};
  for (long i = 0; i < iterations; ++i) {
    const std::string input = mutate(
        corpus[std::uniform_int_distribution<size_t>(0, corpus.size() - 1)(rng)], corpus, rng);
    for (int t = 0; t < 2; ++t) {
      const HttpResult<Call> call = decodeCall(types[t], input);
      if (call.ok()) {
        ++accepted[t];
        if (!consistent(*call, input)) return 1;
      } else {
        const int code = call.httpCode();
        if (code != 400 && code != 501) {
          std::fprintf(stderr, "unexpected status %d: %s\n", code, call.message().c_str());
          return 1;
        }
      }
    }
    // The Accept parser sees the same bytes as a header value.
    const HttpResult<Format> format = responseFormat(input, Format::kJson);
    if (!format.ok() && format.httpCode() != 406) return 1;
  }
  std::printf("%ld iterations (seed %llu): %ld JSON and %ld binary mutants accepted\n", iterations,
              seed, accepted[0], accepted[1]);
  return 0;
}
