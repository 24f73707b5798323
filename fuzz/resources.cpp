// Resource strings (resources/parse.h), as they come from flags, scenarios and agents.
//
// Beyond "no crash": whatever parses prints back to text that parses to the same resources,
// and survives the protobuf conversion (resources/proto/convert.h) unchanged.
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "resources/parse.h"
#include "resources/proto/convert.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace harvest;
  const std::string_view text = fuzz::asText(data, size);
  // The same text once unreserved by default and once with a default role, as the agent's
  // --resources and a scenario's framework roles use it.
  for (std::string_view defaultRole : {"*", "fuzz/role"}) {
    Result<Resources> parsed = parseResources(text, defaultRole);
    if (!parsed.ok()) continue;
    const std::string printed = parsed->toString();
    Result<Resources> again = parseResources(printed);
    if (!again.ok()) {
      fuzz::fail("printed form does not parse: '" + printed + "': " + again.message());
    }
    if (*again != *parsed) fuzz::fail("printed form parses differently: '" + printed + "'");
    Result<Resources> fromWire = fromProto(toProto(*parsed));
    if (!fromWire.ok()) {
      fuzz::fail("protobuf round trip refused '" + printed + "': " + fromWire.message());
    }
    if (*fromWire != *parsed) fuzz::fail("protobuf round trip changed '" + printed + "'");
  }
  return 0;
}
