// An allocator module of this ABI version built by another toolchain: compiled with
// HARVEST_FAKE_COMPILER (a future Clang) or HARVEST_FAKE_PROTOBUF (another protobuf), its
// table reports that build. The loader must refuse it before calling anything in it.
#include "allocator/module_api.h"

namespace {

harvest::Allocator* createNothing(const std::map<std::string, std::string>&,
                                  harvest::AllocatorOptions*, std::string* error) {
  *error = "the loader should have refused this module";
  return nullptr;
}

constexpr harvest::ModuleBuild foreignBuild() {
  harvest::ModuleBuild build = harvest::kModuleBuild;
#if defined(HARVEST_FAKE_COMPILER)
  build.compilerId = "Clang";
  build.compilerMajor = 99;
  build.compilerVersion = "99.1.0";
#elif defined(HARVEST_FAKE_PROTOBUF)
  build.protobufVersion = 4025003;
#else
#error "define HARVEST_FAKE_COMPILER or HARVEST_FAKE_PROTOBUF"
#endif
  return build;
}

const harvest::AllocatorModule kModules[] = {
    {harvest::kModuleApiVersion, foreignBuild(), "foreign", "built elsewhere", &createNothing}};

}  // namespace

extern "C" const harvest::AllocatorModule* harvest_allocator_module_v1(int* count) {
  *count = 1;
  return kModules;
}
