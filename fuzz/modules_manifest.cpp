// Module manifests (master/module_loader.h), from --modules: parsed and validated, and their
// module parameters handed to the built-in allocator module, which parses them into options.
// No library is ever opened: the fuzzer must not make the process dlopen() paths it invents.
#include <cstdint>
#include <map>
#include <string>

#include "allocator/module_api.h"
#include "fuzz/fuzz_support.h"
#include "master/module_loader.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(harvest::fuzz::asText(data, size));
  // Anything else would be read as the path of a manifest file.
  if (!harvest::fuzz::looksInline(text)) return -1;
  harvest::Result<harvest::v1::Modules> manifest = harvest::readModulesManifest(text);
  if (!manifest.ok()) return 0;

  const std::string builtin = harvest::builtinAllocatorModule()->name;
  bool namesBuiltin = false;
  for (const auto& library : manifest->libraries()) {
    for (const auto& module : library.modules()) {
      namesBuiltin = namesBuiltin || module.name() == builtin;
      std::map<std::string, std::string> parameters;
      for (const auto& parameter : module.parameters()) {
        parameters[parameter.key()] = parameter.value();
      }
      // An empty manifest with overrides: the built-in module, given these parameters.
      (void)harvest::loadAllocator("", "", "", parameters);
    }
  }
  // Naming the built-in module when the manifest does not list it validates the whole
  // manifest and then takes the built-in module, without opening the manifest's libraries.
  if (!namesBuiltin) (void)harvest::loadAllocator(text, builtin, "", {});
  return 0;
}
