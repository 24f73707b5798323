// The versioned entry point a Harvest allocator module exports.
//
// A master dlopen()s the library, looks up kModuleSymbol, checks apiVersion and creates an
// allocator by name. Allocators cross the boundary as C++ objects, so master and module must
// be built with the same compiler and standard library (as with Mesos modules).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"

namespace harvest {

inline constexpr uint32_t kModuleApiVersion = 1;
inline constexpr const char* kModuleSymbol = "harvest_allocator_module_v1";

struct AllocatorModule {
  uint32_t apiVersion;  // kModuleApiVersion of the library that built it.
  const char* name;     // The module name a manifest refers to, e.g. "harvest_hierarchical".
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
