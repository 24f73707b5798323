// Loading the allocator from a Mesos-style modules manifest, or using the built-in one.
//
// A manifest is inline JSON (anything starting with '{') or the path of a JSON file:
//   {"libraries":[{"file":"/opt/harvest/libharvest_allocator.so",
//                  "modules":[{"name":"harvest_hierarchical",
//                              "parameters":[{"key":"sorter","value":"drf"}]}]}]}
// A library gives either `file` (a path; it wins when both are given) or `name` ("foo" is
// libfoo.so, looked up in the library directory, next to the running executable, then by
// the dynamic linker's own search).
//
// Libraries are opened RTLD_NOW | RTLD_LOCAL: unresolved symbols fail at load time instead of
// mid-allocation, and a module's symbols never replace the master's. A module shares the
// master's resource model (interned kinds and reservation pools, protobuf descriptors), so the
// master executable must export its symbols; linking harvest_module_loader adds -rdynamic.
//
// Only the library of the chosen module is opened, but the whole manifest is validated first.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"
#include "common/status.h"
#include "protos/modules.pb.h"

namespace harvest {

// An allocator together with the library its code lives in. The allocator is destroyed
// before the library is closed, also on move-assignment, so its destructor never runs from
// unmapped code. Moved-from objects hold nothing.
class LoadedAllocator {
 public:
  LoadedAllocator() = default;
  LoadedAllocator(LoadedAllocator&& other) noexcept = default;
  LoadedAllocator& operator=(LoadedAllocator&& other) noexcept;
  ~LoadedAllocator();

  Allocator* get() const { return allocator_.get(); }
  Allocator* operator->() const { return allocator_.get(); }
  Allocator& operator*() const { return *allocator_; }
  // Puts `decorate(allocator)`, which takes ownership of the allocator, in its place: the
  // master's calls then go through the decorator (e.g. trace/'s RecordingAllocator).
  void wrap(const std::function<std::unique_ptr<Allocator>(std::unique_ptr<Allocator>)>& decorate) {
    allocator_ = decorate(std::move(allocator_));
  }

  // What the manifest's parameters said; the master still sets `clock` before initialize().
  const AllocatorOptions& options() const { return options_; }
  AllocatorOptions& options() { return options_; }
  const std::string& moduleName() const { return moduleName_; }
  // The library the module came from; empty for the built-in module.
  const std::string& libraryPath() const { return libraryPath_; }
  // The parameters the module was created with (manifest, then overrides), for run reports.
  const std::map<std::string, std::string>& parameters() const { return parameters_; }

 private:
  friend class ModuleLoaderAccess;

  struct LibraryCloser {
    void operator()(void* handle) const;
  };

  // Declared first so that it is destroyed last: everything below may point into the library.
  std::unique_ptr<void, LibraryCloser> library_;
  std::unique_ptr<Allocator> allocator_;
  AllocatorOptions options_;
  std::string moduleName_;
  std::string libraryPath_;
  std::map<std::string, std::string> parameters_;
};

// Parses a manifest given inline (starts with '{', leading whitespace allowed) or as a path.
// Unknown JSON fields are errors: a misspelt "parameters" must not be silently dropped.
Result<v1::Modules> readModulesManifest(const std::string& manifestOrPath);

// Creates the allocator module `allocatorName` from the manifest.
//  - Empty manifest: the built-in module (`allocatorName` must then be empty or its name).
//  - Empty `allocatorName`: the manifest must list exactly one module, which is used.
//  - A name the manifest does not list but the built-in module has: the built-in module.
// `libraryDir`, when set, is searched first for libraries given by `name`.
// `overrides` are module parameters set on top of the manifest's (the operator's command
// line wins over the file), validated like them.
Result<LoadedAllocator> loadAllocator(const std::string& manifestOrPath,
                                      const std::string& allocatorName,
                                      const std::string& libraryDir = "",
                                      const std::map<std::string, std::string>& overrides = {});

}  // namespace harvest
