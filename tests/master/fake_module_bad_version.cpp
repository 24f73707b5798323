// An allocator module of another ABI, a future one or (built with HARVEST_FAKE_API_VERSION)
// an older one: the entry symbol is there, the version is not ours.
//
// Only the leading version field is laid out as in module_api.h; the loader must read nothing
// else from a table whose version it does not know.
#include <cstdint>

namespace {

struct OtherModule {
  uint32_t apiVersion;
  uint64_t fieldsTheLoaderMustNotRead[4];
};

#ifndef HARVEST_FAKE_API_VERSION
#define HARVEST_FAKE_API_VERSION 11
#endif

const OtherModule kModules[] = {{HARVEST_FAKE_API_VERSION, {0, 0, 0, 0}}};

}  // namespace

extern "C" const void* harvest_allocator_module_v1(int* count) {
  *count = 1;
  return kModules;
}
