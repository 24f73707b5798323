// Scenarios (sim/scenario.h): the JSON that harvest-master --scenario reads, validated up
// front so that a run never meets bad input. Only the loading is fuzzed, not a run.
#include "sim/scenario.h"

#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(harvest::fuzz::asText(data, size));
  // Anything else would be read as the path of a scenario file.
  if (!harvest::fuzz::looksInline(text)) return -1;
  (void)harvest::sim::loadScenario(text);
  return 0;
}
