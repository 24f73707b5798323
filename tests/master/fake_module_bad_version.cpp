// An allocator module from a future ABI: the entry symbol is there, the version is not ours.
//
// Only the leading version field is laid out as in module_api.h; the loader must read nothing
// else from a table whose version it does not know.
#include <cstdint>

namespace {

struct FutureModule {
  uint32_t apiVersion;
  uint64_t fieldsTheLoaderMustNotRead[4];
};

const FutureModule kModules[] = {{7, {0, 0, 0, 0}}};

}  // namespace

extern "C" const void* harvest_allocator_module_v1(int* count) {
  *count = 1;
  return kModules;
}
