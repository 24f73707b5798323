// The module table: linked into the master as the built-in module and into
// libharvest_allocator.so behind the exported entry symbol.
#include <memory>
#include <utility>

#include "allocator/hierarchical.h"
#include "allocator/module_api.h"

namespace harvest {
namespace {

constexpr const char* kHierarchicalName = "harvest_hierarchical";

Allocator* createHierarchical(const std::map<std::string, std::string>& parameters,
                              AllocatorOptions* options, std::string* error) {
  // The caller may be another build; a null out-pointer must not turn a bad manifest into
  // a crash.
  std::string ignored;
  if (error == nullptr) error = &ignored;

  Result<AllocatorOptions> parsed = AllocatorOptions::fromParameters(parameters);
  if (!parsed.ok()) {
    *error = parsed.message();
    return nullptr;
  }
  if (options != nullptr) *options = std::move(parsed).value();

  std::unique_ptr<Allocator> allocator = makeHierarchicalAllocator();
  if (allocator == nullptr) {
    *error = std::string("allocator '") + kHierarchicalName + "' is not available in this build";
    return nullptr;
  }
  return allocator.release();
}

// Internal linkage, and reached only through the two functions below: a library loaded into
// a master that has its own copy of this file then still hands out its own table and its own
// create(), never the master's.
const AllocatorModule kModules[] = {
    {kModuleApiVersion, kModuleBuild, kHierarchicalName,
     "Hierarchical DRF allocator with quota and a revocable stage", &createHierarchical},
};

}  // namespace

const AllocatorModule* builtinAllocatorModule() {
  return &kModules[0];
}

}  // namespace harvest

// Default visibility even when the library is built with hidden symbols: this is the only name
// a loader looks up.
extern "C" __attribute__((visibility("default"))) const harvest::AllocatorModule*
harvest_allocator_module_v1(int* count) {
  if (count != nullptr) *count = static_cast<int>(std::size(harvest::kModules));
  return harvest::kModules;
}
