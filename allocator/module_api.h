// The versioned entry point a Harvest allocator module exports.
//
// A master dlopen()s the library, looks up kModuleSymbol, checks the table's apiVersion and
// build identity, and creates an allocator by name. Allocators, Resources, AllocatorOptions
// and protobuf messages cross the boundary as C++ objects, so master and module must agree on
// this ABI's version, the compiler, the C++ standard library's ABI and the protobuf and Boost
// headers (Mesos modules have the same rule). A module records how it was built in its table
// (kModuleBuild, evaluated by the module's own compiler), and the loader refuses a module
// whose build differs from its own, saying which part differs. See docs/MODULES.md.
#pragma once

#include <google/protobuf/stubs/common.h>

#include <boost/version.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"

namespace harvest {

// Bumped whenever allocator.h, this file, or a type that crosses them (resources/, the protos)
// changes layout or meaning. 2: AllocatorModule carries `build`. 3: Allocator gained
// explainDecisions() (a new virtual shifts the vtable a master calls through) and
// AllocatorOptions gained lendHeadroom and explainDecisions (fields shift its layout).
// 4: RangeSet shares its intervals (copy on write) and Resources keeps its entries in
// InlineVector: both change the layout of every Resources that crosses.
// 5: FrameworkInfo gained offer_filters (Mesos 1.9), which the allocator applies: the message
// that crosses addFramework()/updateFramework() changes layout, and an older module would
// ignore the filters.
// 6: AllocatorOptions gained `region` (fault domains): its layout shifts, and an older module
// would offer agents of remote regions to every framework.
// 7: addFramework()/updateFramework() take FrameworkOptions (suppressed roles and Mesos 1.11
// offer constraints) instead of a set of roles: the signatures the master calls through
// change, and an older module would offer agents a framework's constraints exclude.
// 8: Allocator gained roleHistory() (the master's read-only query for the web UI's agent
// page): a new virtual shifts the vtable a master calls through.
// 9: ResourceKey gained `shared` (shared persistent volumes): an older module would take a
// shared volume as an exclusive one, booking it to one framework and never offering it again
// while in use.
// 10: the offer and rescind callbacks take their batch by non-const reference, so that the host
// moves each offer out instead of copying it: the std::function types that cross change.
inline constexpr uint32_t kModuleApiVersion = 10;
// The entry point's name; its "v1" is the signature of the function, which has not changed.
// What the table holds is versioned by apiVersion.
inline constexpr const char* kModuleSymbol = "harvest_allocator_module_v1";

// How one side was built: what must match for C++ objects to cross the module boundary.
struct ModuleBuild {
  const char* compilerId;       // "GNU" or "Clang".
  uint32_t compilerMajor;       // Compared: one major version keeps one C++ ABI.
  const char* compilerVersion;  // "12.2.0": for messages only.
  // "libstdc++ (C++11 ABI)", "libstdc++ (old ABI)" or "libc++ <version>": std::string and
  // std::map have different layouts in each.
  const char* standardLibrary;
  uint32_t protobufVersion;  // GOOGLE_PROTOBUF_VERSION, e.g. 3021012 for 3.21.12.
  uint32_t boostVersion;     // BOOST_VERSION: Resources keeps Boost containers inline.
};

#define HARVEST_MODULE_STRINGIFY_(x) #x
#define HARVEST_MODULE_STRINGIFY(x) HARVEST_MODULE_STRINGIFY_(x)

// The build of whoever compiles this header: a module's table and the loader each get their
// own compiler's answer. Clang also defines __GNUC__, so it is tested first.
inline constexpr ModuleBuild kModuleBuild = {
#if defined(__clang__)
    "Clang",
    __clang_major__,
    HARVEST_MODULE_STRINGIFY(__clang_major__) "." HARVEST_MODULE_STRINGIFY(
        __clang_minor__) "." HARVEST_MODULE_STRINGIFY(__clang_patchlevel__),
#elif defined(__GNUC__)
    "GNU",
    __GNUC__,
    HARVEST_MODULE_STRINGIFY(__GNUC__) "." HARVEST_MODULE_STRINGIFY(
        __GNUC_MINOR__) "." HARVEST_MODULE_STRINGIFY(__GNUC_PATCHLEVEL__),
#else
#error "Harvest modules are built with GCC or Clang"
#endif
#if defined(_LIBCPP_VERSION)
    "libc++ " HARVEST_MODULE_STRINGIFY(_LIBCPP_VERSION),
#elif defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
    "libstdc++ (C++11 ABI)",
#elif defined(__GLIBCXX__)
    "libstdc++ (old ABI)",
#else
    "unknown C++ standard library",
#endif
    GOOGLE_PROTOBUF_VERSION,
    BOOST_VERSION,
};

struct AllocatorModule {
  uint32_t apiVersion;  // kModuleApiVersion of the headers the library was built with.
  // Read only once apiVersion matches. Set it to kModuleBuild.
  ModuleBuild build;
  const char* name;  // The module name a manifest refers to, e.g. "harvest_hierarchical".
  const char* description;
  // Builds an allocator from manifest parameters; on bad parameters returns null and sets
  // *error. The caller then calls initialize() with the options it got back.
  Allocator* (*create)(const std::map<std::string, std::string>& parameters,
                       AllocatorOptions* options, std::string* error);
};

// The allocator modules linked into this binary (the "built-in module").
const AllocatorModule* builtinAllocatorModule();

}  // namespace harvest

// Resolved by dlsym; returns a static table of `*count` modules.
extern "C" const harvest::AllocatorModule* harvest_allocator_module_v1(int* count);
