#include "master/module_loader.h"

#include <dlfcn.h>
#include <google/protobuf/util/json_util.h>

#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "allocator/module_api.h"

namespace harvest {

namespace fs = std::filesystem;

// Lets the loader fill in a LoadedAllocator without making its fields public.
class ModuleLoaderAccess {
 public:
  static void set(LoadedAllocator& loaded, void* library, std::unique_ptr<Allocator> allocator,
                  AllocatorOptions options, std::string moduleName, std::string libraryPath,
                  std::map<std::string, std::string> parameters) {
    loaded.library_.reset(library);
    loaded.allocator_ = std::move(allocator);
    loaded.options_ = std::move(options);
    loaded.moduleName_ = std::move(moduleName);
    loaded.libraryPath_ = std::move(libraryPath);
    loaded.parameters_ = std::move(parameters);
  }
};

void LoadedAllocator::LibraryCloser::operator()(void* handle) const {
  if (handle != nullptr && dlclose(handle) != 0) {
    const char* error = dlerror();
    LOG(WARNING) << "Closing an allocator module library failed: "
                 << (error != nullptr ? error : "unknown error");
  }
}

LoadedAllocator& LoadedAllocator::operator=(LoadedAllocator&& other) noexcept {
  if (this != &other) {
    // The member-wise default would close our library before destroying our allocator.
    allocator_.reset();
    options_ = AllocatorOptions();
    library_ = std::move(other.library_);
    allocator_ = std::move(other.allocator_);
    options_ = std::move(other.options_);
    moduleName_ = std::move(other.moduleName_);
    libraryPath_ = std::move(other.libraryPath_);
    parameters_ = std::move(other.parameters_);
  }
  return *this;
}

LoadedAllocator::~LoadedAllocator() {
  // Explicit, so the order does not hinge on member declaration order alone.
  allocator_.reset();
  options_ = AllocatorOptions();
}

namespace {

using Library = v1::Modules::Library;
using Module = v1::Modules::Library::Module;

// Errors are single lines in the master's log and in test expectations; dlerror() and
// protobuf messages may carry newlines.
std::string oneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string lastDlError() {
  const char* error = dlerror();
  return error != nullptr ? oneLine(error) : "unknown dynamic loader error";
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out.empty() ? "none" : out;
}

// Where a module sits in the manifest, for messages that must point at one entry.
std::string describeLibrary(const Library& library, int index) {
  if (library.has_file()) return "library '" + library.file() + "'";
  if (library.has_name()) return "library '" + library.name() + "'";
  return "library #" + std::to_string(index + 1);
}

Result<std::string> readFile(const std::string& path) {
  using FileResult = Result<std::string>;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error) {
    std::string message = "cannot read modules manifest '" + path + "': " + error.message();
    return error == std::errc::no_such_file_or_directory ? Status::notFound(std::move(message))
                                                         : Status::ioError(std::move(message));
  }
  if (fs::is_directory(status)) {
    return FileResult::invalidArgument("cannot read modules manifest '" + path +
                                       "': is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::ioError("cannot read modules manifest '" + path + "': " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return Status::ioError("cannot read modules manifest '" + path + "': " + std::strerror(errno));
  }
  return text.str();
}

// Checks what can be checked without opening any library, so a broken manifest is reported
// the same way whichever module is chosen.
Status validateManifest(const v1::Modules& modules) {
  std::set<std::string> names;
  for (int i = 0; i < modules.libraries_size(); ++i) {
    const Library& library = modules.libraries(i);
    if (library.file().empty() && library.name().empty()) {
      return Status::invalidArgument("library #" + std::to_string(i + 1) +
                                     " in the modules manifest has neither 'file' nor 'name'");
    }
    if (!library.has_file() && library.name().find('/') != std::string::npos) {
      return Status::invalidArgument(
          "library name '" + library.name() +
          "' in the modules manifest contains '/'; use 'file' for a path");
    }
    if (library.modules_size() == 0) {
      return Status::invalidArgument(describeLibrary(library, i) +
                                     " in the modules manifest lists no modules");
    }
    for (const Module& module : library.modules()) {
      if (module.name().empty()) {
        return Status::invalidArgument("a module of " + describeLibrary(library, i) +
                                       " in the modules manifest has no name");
      }
      if (!names.insert(module.name()).second) {
        return Status::invalidArgument("duplicate module name '" + module.name() +
                                       "' in the modules manifest");
      }
      std::set<std::string> keys;
      for (const auto& parameter : module.parameters()) {
        if (!keys.insert(parameter.key()).second) {
          return Status::invalidArgument("duplicate parameter '" + parameter.key() +
                                         "' for module '" + module.name() +
                                         "' in the modules manifest");
        }
      }
    }
  }
  return Status();
}

std::string executableDir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.parent_path().string();
}

struct OpenedLibrary {
  void* handle = nullptr;
  std::string path;
};

// A hint for the one load failure that is the master's fault rather than the module's.
std::string explainLoadError(const std::string& error) {
  if (error.find("undefined symbol") == std::string::npos) return error;
  return error +
         " (a module resolves Harvest's resource model from the master: is the master linked"
         " with ENABLE_EXPORTS/-rdynamic, and built from the same sources?)";
}

Result<OpenedLibrary> openLibrary(const Library& library, const std::string& libraryDir) {
  constexpr int kFlags = RTLD_NOW | RTLD_LOCAL;
  dlerror();  // Clear any stale error so the one reported is ours.

  if (library.has_file()) {
    std::string path = library.file();
    // Without a '/', dlopen() would search the library path instead of opening this file.
    if (path.find('/') == std::string::npos) path = "./" + path;
    void* handle = dlopen(path.c_str(), kFlags);
    if (handle == nullptr) {
      return Status::failedPrecondition("cannot load module library '" + library.file() +
                                        "': " + explainLoadError(lastDlError()));
    }
    return OpenedLibrary{handle, library.file()};
  }

  const std::string file = "lib" + library.name() + ".so";
  std::vector<std::string> dirs;
  if (!libraryDir.empty()) dirs.push_back(libraryDir);
  if (std::string exeDir = executableDir(); !exeDir.empty()) dirs.push_back(exeDir);
  for (const std::string& dir : dirs) {
    const std::string path = (fs::path(dir) / file).string();
    std::error_code error;
    if (!fs::exists(path, error)) continue;
    // A file that is there but does not load is reported as such, not skipped: falling
    // through to another copy would hide the real problem.
    void* handle = dlopen(path.c_str(), kFlags);
    if (handle == nullptr) {
      return Status::failedPrecondition("cannot load module library '" + path +
                                        "': " + explainLoadError(lastDlError()));
    }
    return OpenedLibrary{handle, path};
  }
  void* handle = dlopen(file.c_str(), kFlags);
  if (handle == nullptr) {
    std::string searched;
    for (const std::string& dir : dirs) searched += "'" + dir + "', ";
    return Status::notFound(
        "cannot find module library '" + file + "' (library name '" + library.name() + "') in " +
        searched + "or the dynamic linker's search path: " + explainLoadError(lastDlError()));
  }
  return OpenedLibrary{handle, file};
}

// Modules are trusted code, but a throwing create() must still not take the master down
// with an unhandled exception.
Result<std::unique_ptr<Allocator>> createAllocator(const AllocatorModule& module,
                                                   const std::map<std::string, std::string>& params,
                                                   AllocatorOptions* options,
                                                   const std::string& where) {
  using CreateResult = Result<std::unique_ptr<Allocator>>;
  std::string error;
  Allocator* allocator = nullptr;
  try {
    allocator = module.create(params, options, &error);
  } catch (const std::exception& e) {
    return Status::internal("module '" + std::string(module.name) + "'" + where +
                            " threw while creating the allocator: " + oneLine(e.what()));
  } catch (...) {
    return Status::internal("module '" + std::string(module.name) + "'" + where +
                            " threw while creating the allocator");
  }
  if (allocator == nullptr) {
    if (error.empty()) error = "no allocator was created and no reason was given";
    return CreateResult::invalidArgument("module '" + std::string(module.name) + "'" + where +
                                         ": " + oneLine(error));
  }
  return std::unique_ptr<Allocator>(allocator);
}

std::string describeParameters(const std::map<std::string, std::string>& params) {
  if (params.empty()) return "no parameters";
  std::string out = "parameters ";
  bool first = true;
  for (const auto& [key, value] : params) {
    out += (first ? "" : ", ") + key + "=" + value;
    first = false;
  }
  return out;
}

Result<LoadedAllocator> loadBuiltin(const std::string& requested,
                                    const std::map<std::string, std::string>& params) {
  const AllocatorModule* module = builtinAllocatorModule();
  if (!requested.empty() && requested != module->name) {
    return Status::notFound("unknown allocator module '" + requested + "'; available: '" +
                            module->name + "' (built-in)");
  }
  AllocatorOptions options;
  Result<std::unique_ptr<Allocator>> allocator =
      createAllocator(*module, params, &options, " (built-in)");
  if (!allocator.ok()) return allocator.status();
  LOG(INFO) << "Using the built-in allocator module '" << module->name << "' ("
            << module->description << ")";
  LoadedAllocator loaded;
  ModuleLoaderAccess::set(loaded, nullptr, std::move(allocator).value(), std::move(options),
                          module->name, "", params);
  return loaded;
}

std::string protobufVersion(uint32_t v) {
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000);
}

std::string boostVersion(uint32_t v) {
  return std::to_string(v / 100000) + "." + std::to_string(v / 100 % 1000) + "." +
         std::to_string(v % 100);
}

// A module built differently from the master would pass std::string, std::map, Resources and
// protobuf messages whose layouts disagree: the crash would come later and far from the
// cause. Refused here with what differs and what to do about it.
Status checkBuild(const ModuleBuild& module, const std::string& path) {
  const ModuleBuild& host = kModuleBuild;
  const std::string cannotLoad = "module library '" + path + "' cannot be loaded: it was built ";
  auto text = [](const char* s) { return std::string(s != nullptr ? s : "(unknown)"); };
  if (text(module.compilerId) != host.compilerId || module.compilerMajor != host.compilerMajor) {
    return Status::failedPrecondition(
        cannotLoad + "with " + text(module.compilerId) + " " + text(module.compilerVersion) +
        ", this master with " + host.compilerId + " " + host.compilerVersion +
        " (C++ objects cross the module ABI: build the module with the master's compiler)");
  }
  if (text(module.standardLibrary) != host.standardLibrary) {
    return Status::failedPrecondition(cannotLoad + "against " + text(module.standardLibrary) +
                                      ", this master against " + host.standardLibrary +
                                      " (standard library types cross the module ABI)");
  }
  if (module.protobufVersion != host.protobufVersion) {
    return Status::failedPrecondition(
        cannotLoad + "against protobuf " + protobufVersion(module.protobufVersion) +
        ", this master against protobuf " + protobufVersion(host.protobufVersion) +
        " (protobuf messages cross the module ABI: rebuild it against the master's protobuf)");
  }
  if (module.boostVersion != host.boostVersion) {
    return Status::failedPrecondition(
        cannotLoad + "against Boost " + boostVersion(module.boostVersion) +
        ", this master against Boost " + boostVersion(host.boostVersion) +
        " (Resources keeps Boost containers inline: rebuild it against the master's Boost)");
  }
  return Status();
}

// Finds `name` in the table a library returned, trusting the table's layout only after its
// first entry's version says it was built against this ABI.
Result<const AllocatorModule*> findInTable(const AllocatorModule* table, int count,
                                           const std::string& name, const std::string& path) {
  constexpr int kMaxModules = 1024;  // Anything larger is a corrupt count, not a real table.
  if (table == nullptr || count <= 0 || count > kMaxModules) {
    return Status::failedPrecondition("module library '" + path +
                                      "' returned an empty or invalid table (" +
                                      std::to_string(count) + " entries)");
  }
  for (int i = 0; i < count; ++i) {
    if (table[i].apiVersion != kModuleApiVersion) {
      return Status::failedPrecondition("module library '" + path + "' uses module API version " +
                                        std::to_string(table[i].apiVersion) + ", expected " +
                                        std::to_string(kModuleApiVersion) +
                                        ": rebuild it against this master's Harvest headers");
    }
    if (Status same = checkBuild(table[i].build, path); !same.ok()) return same;
  }
  const AllocatorModule* found = nullptr;
  std::vector<std::string> provided;
  for (int i = 0; i < count; ++i) {
    if (table[i].name == nullptr || table[i].create == nullptr) {
      return Status::failedPrecondition("module library '" + path +
                                        "' has an entry without a name or create function");
    }
    provided.emplace_back(table[i].name);
    if (name == table[i].name) {
      if (found != nullptr) {
        return Status::failedPrecondition("module library '" + path + "' provides module '" + name +
                                          "' twice");
      }
      found = &table[i];
    }
  }
  if (found == nullptr) {
    return Status::notFound("module library '" + path + "' has no module '" + name +
                            "'; it provides " + joinNames(provided));
  }
  return found;
}

}  // namespace

Result<v1::Modules> readModulesManifest(const std::string& manifestOrPath) {
  std::string json;
  std::string source;
  const size_t first = manifestOrPath.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && manifestOrPath[first] == '{') {
    json = manifestOrPath;
    source = "inline modules manifest";
  } else {
    Result<std::string> text = readFile(manifestOrPath);
    if (!text.ok()) return text.status();
    json = std::move(text).value();
    source = "modules manifest '" + manifestOrPath + "'";
  }

  v1::Modules modules;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &modules, options);
  if (!status.ok()) {
    return Result<v1::Modules>::invalidArgument("malformed " + source + ": " +
                                                oneLine(std::string(status.message())));
  }
  // Protobuf 3.21's JSON parser already rejects a parameter without key or value; this keeps
  // that guarantee should another version only warn.
  if (!modules.IsInitialized()) {
    return Result<v1::Modules>::invalidArgument(
        "malformed " + source + ": missing required field " + modules.InitializationErrorString());
  }
  return modules;
}

Result<LoadedAllocator> loadAllocator(const std::string& manifestOrPath,
                                      const std::string& allocatorName,
                                      const std::string& libraryDir,
                                      const std::map<std::string, std::string>& overrides) {
  if (manifestOrPath.find_first_not_of(" \t\r\n") == std::string::npos) {
    return loadBuiltin(allocatorName, overrides);
  }

  Result<v1::Modules> manifest = readModulesManifest(manifestOrPath);
  if (!manifest.ok()) return manifest.status();
  if (Status valid = validateManifest(*manifest); !valid.ok()) return valid;

  const Library* library = nullptr;
  const Module* module = nullptr;
  std::vector<std::string> names;
  for (const Library& candidate : manifest->libraries()) {
    for (const Module& entry : candidate.modules()) {
      names.push_back(entry.name());
      if (entry.name() == allocatorName) {
        library = &candidate;
        module = &entry;
      }
    }
  }
  if (allocatorName.empty()) {
    if (names.size() != 1) {
      return Result<LoadedAllocator>::invalidArgument(
          "the modules manifest lists " + std::to_string(names.size()) + " modules (" +
          joinNames(names) + "); name the allocator module to use");
    }
    // Every library lists at least one module (validated), so one module means one library.
    library = &manifest->libraries(0);
    module = &library->modules(0);
  } else if (module == nullptr) {
    const std::string builtin = builtinAllocatorModule()->name;
    if (allocatorName == builtin) return loadBuiltin(allocatorName, overrides);
    return Status::notFound("unknown allocator module '" + allocatorName +
                            "'; the modules manifest lists " + joinNames(names) +
                            " and the built-in module is '" + builtin + "'");
  }

  std::map<std::string, std::string> params;
  for (const auto& parameter : module->parameters()) params[parameter.key()] = parameter.value();
  for (const auto& [key, value] : overrides) params[key] = value;

  Result<OpenedLibrary> opened = openLibrary(*library, libraryDir);
  if (!opened.ok()) return opened.status();
  // Owns the handle from here on, so every early return below closes it.
  std::unique_ptr<void, void (*)(void*)> handle(opened->handle, [](void* h) { dlclose(h); });
  const std::string& path = opened->path;

  dlerror();
  void* symbol = dlsym(handle.get(), kModuleSymbol);
  if (symbol == nullptr) {
    return Status::failedPrecondition("module library '" + path + "' does not export '" +
                                      kModuleSymbol + "': " + lastDlError());
  }
  using EntryPoint = const AllocatorModule* (*)(int*);
  int count = -1;
  const AllocatorModule* table = reinterpret_cast<EntryPoint>(symbol)(&count);
  Result<const AllocatorModule*> found = findInTable(table, count, module->name(), path);
  if (!found.ok()) return found.status();

  AllocatorOptions options;
  Result<std::unique_ptr<Allocator>> allocator =
      createAllocator(**found, params, &options, " from '" + path + "'");
  if (!allocator.ok()) return allocator.status();

  const char* description = (*found)->description;
  LOG(INFO) << "Loaded allocator module '" << module->name() << "' ("
            << (description != nullptr ? description : "no description") << ") from '" << path
            << "' with " << describeParameters(params);
  LoadedAllocator loaded;
  ModuleLoaderAccess::set(loaded, handle.release(), std::move(allocator).value(),
                          std::move(options), module->name(), path, std::move(params));
  return loaded;
}

}  // namespace harvest
