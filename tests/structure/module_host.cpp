// A host with no Harvest code of its own: it knows the module ABI (allocator/allocator.h,
// allocator/module_api.h) and the shared model libraries the ABI's types come from, dlopen()s
// libharvest_allocator.so, and runs one allocation through it. If the module relied on code
// from the program that loads it, loading or allocating here would fail.
//
// Usage: module_host <path to libharvest_allocator.so>. Exit 0 and one line describing the
// offer when the framework is offered the whole agent, exactly; 1 otherwise.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"
#include "allocator/module_api.h"
#include "resources/parse.h"

namespace {

int fail(const std::string& why) {
  std::fprintf(stderr, "module_host: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: module_host <libharvest_allocator.so>");
  void* library = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return fail(std::string("dlopen: ") + ::dlerror());
  using Entry = const harvest::AllocatorModule* (*)(int*);
  auto entry = reinterpret_cast<Entry>(::dlsym(library, harvest::kModuleSymbol));
  if (entry == nullptr) return fail(std::string("no ") + harvest::kModuleSymbol);
  int count = 0;
  const harvest::AllocatorModule* modules = entry(&count);
  if (count != 1 || modules[0].apiVersion != harvest::kModuleApiVersion) {
    return fail("unexpected module table");
  }

  harvest::AllocatorOptions options;
  std::string error;
  std::unique_ptr<harvest::Allocator> allocator(modules[0].create({}, &options, &error));
  if (!allocator) return fail("create: " + error);
  options.clock = [] { return harvest::Time(); };

  std::map<std::string, harvest::OfferedResources> offered;
  harvest::AllocatorCallbacks callbacks;
  callbacks.offer = [&](const std::string& framework, harvest::OfferedResources& offers) {
    offered[framework] = offers;
  };
  if (harvest::Status s = allocator->initialize(options, callbacks); !s.ok()) {
    return fail("initialize: " + s.message());
  }
  harvest::v1::FrameworkInfo framework;
  framework.add_roles("web");
  if (harvest::Status s = allocator->addFramework("f1", framework, {}, true, {}); !s.ok()) {
    return fail("addFramework: " + s.message());
  }
  const harvest::Resources total = *harvest::parseResources("cpus:4;mem:1024");
  if (harvest::Status s =
          allocator->addAgent("a1", harvest::v1::AgentInfo(), std::nullopt, total, {});
      !s.ok()) {
    return fail("addAgent: " + s.message());
  }
  allocator->allocate();

  if (offered.size() != 1 || offered["f1"].size() != 1) return fail("expected one offer to f1");
  const harvest::OfferedResource& offer = offered["f1"][0];
  if (offer.agent != "a1" || offer.role != "web" || !(offer.resources == total)) {
    return fail("unexpected offer on " + offer.agent + " for " + offer.role);
  }
  std::printf("offered f1 role %s on %s: the whole agent\n", offer.role.c_str(),
              offer.agent.c_str());
  allocator.reset();
  return 0;
}
