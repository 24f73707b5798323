#include "master/module_loader.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "allocator/module_api.h"

namespace harvest {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

const std::string kAllocatorSo = HARVEST_ALLOCATOR_SO;
const std::string kAllocatorSoDir = HARVEST_ALLOCATOR_SO_DIR;
const std::string kNoSymbolSo = HARVEST_FAKE_NO_SYMBOL_SO;
const std::string kBadVersionSo = HARVEST_FAKE_BAD_VERSION_SO;
const std::string kOldVersionSo = HARVEST_FAKE_OLD_VERSION_SO;
const std::string kOtherCompilerSo = HARVEST_FAKE_OTHER_COMPILER_SO;
const std::string kOtherProtobufSo = HARVEST_FAKE_OTHER_PROTOBUF_SO;
const std::string kUnavailable = "allocator 'harvest_hierarchical' is not available in this build";

// ctest runs test cases as parallel processes: file names carry the pid.
std::string tempPath(const std::string& name) {
  return testing::TempDir() + "harvest_module_loader_" + std::to_string(getpid()) + "_" + name;
}

std::string writeFile(const std::string& name, const std::string& content) {
  const std::string path = tempPath(name);
  std::ofstream(path) << content;
  return path;
}

std::string libraryJson(const std::string& fileOrNameField, const std::string& value,
                        const std::string& modulesJson) {
  return R"({")" + fileOrNameField + R"(":")" + value + R"(","modules":[)" + modulesJson + "]}";
}

std::string moduleJson(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& params = {}) {
  std::string out = R"({"name":")" + name + R"(","parameters":[)";
  for (size_t i = 0; i < params.size(); ++i) {
    out += (i ? "," : "") + std::string(R"({"key":")") + params[i].first + R"(","value":")" +
           params[i].second + R"("})";
  }
  return out + "]}";
}

std::string manifest(const std::vector<std::string>& libraries) {
  std::string out = R"({"libraries":[)";
  for (size_t i = 0; i < libraries.size(); ++i) out += (i ? "," : "") + libraries[i];
  return out + "]}";
}

std::string realLibrary(const std::vector<std::pair<std::string, std::string>>& params = {}) {
  return libraryJson("file", kAllocatorSo, moduleJson("harvest_hierarchical", params));
}

std::string loadError(const std::string& manifestOrPath, const std::string& name = "",
                      const std::string& libraryDir = "") {
  Result<LoadedAllocator> loaded = loadAllocator(manifestOrPath, name, libraryDir);
  EXPECT_FALSE(loaded.ok()) << "loaded '" << name << "' from " << manifestOrPath;
  return loaded.message();
}

StatusCode loadCode(const std::string& manifestOrPath, const std::string& name = "") {
  return loadAllocator(manifestOrPath, name, "").code();
}

// The allocator proper is developed alongside the loader; the loader is correct either when
// it hands out an allocator or when it says plainly that this build has none.
void expectLoadedOrUnavailable(const Result<LoadedAllocator>& loaded,
                               const std::string& expectedLibrary) {
  if (!loaded.ok()) {
    EXPECT_THAT(loaded.message(), HasSubstr(kUnavailable));
    return;
  }
  ASSERT_NE(loaded->get(), nullptr);
  EXPECT_EQ(loaded->moduleName(), "harvest_hierarchical");
  EXPECT_EQ(loaded->libraryPath(), expectedLibrary);
}

// --- The manifest itself -------------------------------------------------------------------

TEST(ModuleLoaderTest, MissingManifestFile) {
  const std::string path = tempPath("does_not_exist.json");
  EXPECT_EQ(loadError(path),
            "cannot read modules manifest '" + path + "': No such file or directory");
  EXPECT_EQ(loadCode(path), StatusCode::kNotFound);
}

TEST(ModuleLoaderTest, ManifestPathIsADirectory) {
  const std::string dir = tempPath("dir");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(loadError(dir), "cannot read modules manifest '" + dir + "': is a directory");
  EXPECT_EQ(loadCode(dir), StatusCode::kInvalidArgument);
  std::filesystem::remove(dir);
}

TEST(ModuleLoaderTest, UnreadableManifestFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const std::string path = writeFile("unreadable.json", manifest({realLibrary()}));
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  EXPECT_EQ(loadError(path), "cannot read modules manifest '" + path + "': Permission denied");
  EXPECT_EQ(loadCode(path), StatusCode::kIOError);
}

TEST(ModuleLoaderTest, ManifestPathThroughAFile) {
  const std::string file = writeFile("plain_file", "");
  EXPECT_EQ(loadError(file + "/modules.json"),
            "cannot read modules manifest '" + file + "/modules.json': Not a directory");
}

TEST(ModuleLoaderTest, MalformedInlineJson) {
  EXPECT_THAT(loadError(R"({"libraries":[)"), StartsWith("malformed inline modules manifest: "));
  EXPECT_THAT(loadError("{not json}"), StartsWith("malformed inline modules manifest: "));
}

TEST(ModuleLoaderTest, MalformedJsonFileIncludesParserText) {
  const std::string path = writeFile("malformed.json", R"({"libraries": 5})");
  const std::string error = loadError(path);
  EXPECT_THAT(error, StartsWith("malformed modules manifest '" + path + "': "));
  // Protobuf's own explanation follows the prefix.
  EXPECT_GT(error.size(), ("malformed modules manifest '" + path + "': ").size());
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(ModuleLoaderTest, EmptyManifestFile) {
  const std::string path = writeFile("empty.json", "");
  EXPECT_THAT(loadError(path), StartsWith("malformed modules manifest '" + path + "': "));
}

TEST(ModuleLoaderTest, UnknownFieldIsAnError) {
  const std::string error =
      loadError(R"({"libraries":[{"file":"x.so","modules":[{"name":"m","params":[]}]}]})");
  EXPECT_THAT(error, StartsWith("malformed inline modules manifest: "));
  EXPECT_THAT(error, HasSubstr("params"));
}

TEST(ModuleLoaderTest, ParameterWithoutValue) {
  const std::string error = loadError(R"({"libraries":[{"file":"x.so","modules":[{"name":"m",)"
                                      R"("parameters":[{"key":"seed"}]}]}]})");
  EXPECT_THAT(error, StartsWith("malformed inline modules manifest: "));
  EXPECT_THAT(error, HasSubstr("libraries[0].modules[0].parameters[0]"));
  EXPECT_THAT(error, HasSubstr("value"));
}

TEST(ModuleLoaderTest, ReadModulesManifestParsesMesosShape) {
  Result<v1::Modules> modules =
      readModulesManifest("  \n" + manifest({realLibrary({{"seed", "3"}}),
                                             libraryJson("name", "other", moduleJson("m2"))}));
  ASSERT_TRUE(modules.ok()) << modules.message();
  ASSERT_EQ(modules->libraries_size(), 2);
  EXPECT_EQ(modules->libraries(0).file(), kAllocatorSo);
  EXPECT_EQ(modules->libraries(0).modules(0).name(), "harvest_hierarchical");
  EXPECT_EQ(modules->libraries(0).modules(0).parameters(0).key(), "seed");
  EXPECT_EQ(modules->libraries(0).modules(0).parameters(0).value(), "3");
  EXPECT_EQ(modules->libraries(1).name(), "other");
}

// --- Manifest structure ----------------------------------------------------------------------

TEST(ModuleLoaderTest, LibraryWithNeitherFileNorName) {
  EXPECT_EQ(loadError(manifest({realLibrary(), R"({"modules":[{"name":"m"}]})"})),
            "library #2 in the modules manifest has neither 'file' nor 'name'");
}

TEST(ModuleLoaderTest, LibraryNameWithSlash) {
  EXPECT_EQ(loadError(manifest({libraryJson("name", "a/b", moduleJson("m"))})),
            "library name 'a/b' in the modules manifest contains '/'; use 'file' for a path");
}

TEST(ModuleLoaderTest, LibraryWithoutModules) {
  EXPECT_EQ(loadError(manifest({R"({"file":"/x/libx.so"})"})),
            "library '/x/libx.so' in the modules manifest lists no modules");
}

TEST(ModuleLoaderTest, ModuleWithoutName) {
  EXPECT_EQ(loadError(manifest({R"({"file":"/x/libx.so","modules":[{}]})"})),
            "a module of library '/x/libx.so' in the modules manifest has no name");
}

TEST(ModuleLoaderTest, DuplicateModuleNames) {
  EXPECT_EQ(loadError(manifest({realLibrary(),
                                libraryJson("name", "other", moduleJson("harvest_hierarchical"))}),
                      "harvest_hierarchical"),
            "duplicate module name 'harvest_hierarchical' in the modules manifest");
}

TEST(ModuleLoaderTest, DuplicateParameterKeys) {
  EXPECT_EQ(loadError(manifest({realLibrary({{"seed", "1"}, {"seed", "2"}})})),
            "duplicate parameter 'seed' for module 'harvest_hierarchical' in the modules "
            "manifest");
}

// --- Choosing the module ---------------------------------------------------------------------

TEST(ModuleLoaderTest, NoNameWithSeveralModulesIsAmbiguous) {
  EXPECT_EQ(loadError(manifest({realLibrary(), libraryJson("name", "other", moduleJson("m2"))})),
            "the modules manifest lists 2 modules ('harvest_hierarchical', 'm2'); name the "
            "allocator module to use");
  EXPECT_EQ(loadCode(manifest({realLibrary(), libraryJson("name", "other", moduleJson("m2"))})),
            StatusCode::kInvalidArgument);
}

TEST(ModuleLoaderTest, UnknownModuleNameListsAvailable) {
  EXPECT_EQ(
      loadError(manifest({realLibrary(), libraryJson("name", "other", moduleJson("m2"))}), "drf"),
      "unknown allocator module 'drf'; the modules manifest lists 'harvest_hierarchical', "
      "'m2' and the built-in module is 'harvest_hierarchical'");
}

TEST(ModuleLoaderTest, UnknownNameWithoutManifest) {
  EXPECT_EQ(loadError("", "drf"),
            "unknown allocator module 'drf'; available: 'harvest_hierarchical' (built-in)");
  EXPECT_EQ(loadCode("", "drf"), StatusCode::kNotFound);
}

TEST(ModuleLoaderTest, NoManifestMeansBuiltin) {
  Result<LoadedAllocator> loaded = loadAllocator("", "");
  if (!loaded.ok()) {
    EXPECT_EQ(loaded.message(), "module 'harvest_hierarchical' (built-in): " + kUnavailable);
    return;
  }
  EXPECT_EQ(loaded->moduleName(), "harvest_hierarchical");
  EXPECT_EQ(loaded->libraryPath(), "");
  EXPECT_EQ(loaded->options().sorter, "drf");
  EXPECT_EQ(loaded->options().seed, 0u);
}

TEST(ModuleLoaderTest, BuiltinByName) {
  expectLoadedOrUnavailable(loadAllocator("  ", "harvest_hierarchical"), "");
}

TEST(ModuleLoaderTest, BuiltinNameNotInManifestFallsBackToBuiltin) {
  // The manifest's only library is broken, which proves it is never opened.
  expectLoadedOrUnavailable(
      loadAllocator(manifest({libraryJson("file", kBadVersionSo, moduleJson("future"))}),
                    "harvest_hierarchical"),
      "");
}

TEST(ModuleLoaderTest, OnlyTheChosenLibraryIsOpened) {
  const std::string modules =
      manifest({libraryJson("file", kBadVersionSo, moduleJson("future")),
                libraryJson("file", kNoSymbolSo, moduleJson("nothing")), realLibrary()});
  expectLoadedOrUnavailable(loadAllocator(modules, "harvest_hierarchical"), kAllocatorSo);
  EXPECT_THAT(loadError(modules, "future"), HasSubstr("uses module API version 11"));
}

// --- Opening libraries ------------------------------------------------------------------------

TEST(ModuleLoaderTest, LibraryFileMissing) {
  const std::string path = tempPath("libmissing.so");
  const std::string error = loadError(manifest({libraryJson("file", path, moduleJson("m"))}));
  EXPECT_THAT(error, StartsWith("cannot load module library '" + path + "': "));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));  // dlerror()'s text.
}

TEST(ModuleLoaderTest, LibraryFileNotAnElf) {
  const std::string path = writeFile("libjunk.so", "not a shared library\n");
  const std::string error = loadError(manifest({libraryJson("file", path, moduleJson("m"))}));
  EXPECT_THAT(error, StartsWith("cannot load module library '" + path + "': "));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(ModuleLoaderTest, RelativeFileIsAPathNotASearch) {
  // "libdl.so.2" would be found by a library-path search; as a file it is relative to the
  // working directory, where it is not.
  const std::string error =
      loadError(manifest({libraryJson("file", "libdl.so.2", moduleJson("m"))}));
  EXPECT_THAT(error, StartsWith("cannot load module library 'libdl.so.2': "));
}

TEST(ModuleLoaderTest, LibraryNameNotFound) {
  const std::string dir = tempPath("libdir");
  std::filesystem::create_directories(dir);
  const std::string error = loadError(
      manifest({libraryJson("name", "harvest_no_such_module", moduleJson("m"))}), "", dir);
  EXPECT_THAT(error, StartsWith("cannot find module library 'libharvest_no_such_module.so' "
                                "(library name 'harvest_no_such_module') in '" +
                                dir + "', '"));
  EXPECT_THAT(error, HasSubstr("or the dynamic linker's search path: "));
  std::filesystem::remove(dir);
}

TEST(ModuleLoaderTest, MissingEntrySymbol) {
  EXPECT_THAT(loadError(manifest({libraryJson("file", kNoSymbolSo, moduleJson("m"))})),
              StartsWith("module library '" + kNoSymbolSo +
                         "' does not export 'harvest_allocator_module_v1': "));
}

TEST(ModuleLoaderTest, ApiVersionMismatch) {
  EXPECT_EQ(loadError(manifest({libraryJson("file", kBadVersionSo, moduleJson("future"))})),
            "module library '" + kBadVersionSo +
                "' uses module API version 11, expected 10: rebuild it against this master's "
                "Harvest headers");
}

// A module of the API before the offer callbacks took their batch by non-const reference would call
// them through another std::function type. Refused, saying why.
TEST(ModuleLoaderTest, ModuleOfTheApiBeforeOffersWereHandedOverIsRefused) {
  EXPECT_EQ(loadError(manifest({libraryJson("file", kOldVersionSo, moduleJson("old"))})),
            "module library '" + kOldVersionSo +
                "' uses module API version 9, expected 10: rebuild it against this master's "
                "Harvest headers");
}

TEST(ModuleLoaderTest, ModuleBuiltByAnotherCompilerIsRefused) {
  Result<LoadedAllocator> loaded =
      loadAllocator(manifest({libraryJson("file", kOtherCompilerSo, moduleJson("foreign"))}), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(loaded.message(), "module library '" + kOtherCompilerSo +
                                  "' cannot be loaded: it was built with Clang 99.1.0, this "
                                  "master with " +
                                  kModuleBuild.compilerId + " " + kModuleBuild.compilerVersion +
                                  " (C++ objects cross the module ABI: build the module with "
                                  "the master's compiler)");
}

TEST(ModuleLoaderTest, ModuleBuiltAgainstAnotherProtobufIsRefused) {
  Result<LoadedAllocator> loaded =
      loadAllocator(manifest({libraryJson("file", kOtherProtobufSo, moduleJson("foreign"))}), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.code(), StatusCode::kFailedPrecondition);
  // This build's protobuf is Debian 12's 3.21.12; the fake says 4.25.3.
  EXPECT_EQ(GOOGLE_PROTOBUF_VERSION, 3021012);
  EXPECT_EQ(loaded.message(), "module library '" + kOtherProtobufSo +
                                  "' cannot be loaded: it was built against protobuf 4.25.3, "
                                  "this master against protobuf 3.21.12 (protobuf messages "
                                  "cross the module ABI: rebuild it against the master's "
                                  "protobuf)");
}

TEST(ModuleEntryPointTest, TablesCarryTheirBuild) {
  const AllocatorModule* module = builtinAllocatorModule();
  EXPECT_STREQ(module->build.compilerId, kModuleBuild.compilerId);
  EXPECT_EQ(module->build.compilerMajor, kModuleBuild.compilerMajor);
  EXPECT_EQ(module->build.protobufVersion, static_cast<uint32_t>(GOOGLE_PROTOBUF_VERSION));
  EXPECT_EQ(module->build.boostVersion, static_cast<uint32_t>(BOOST_VERSION));
#if defined(__GNUC__) && !defined(__clang__)
  EXPECT_STREQ(module->build.compilerId, "GNU");
  EXPECT_EQ(module->build.compilerMajor, static_cast<uint32_t>(__GNUC__));
#endif
  EXPECT_STREQ(module->build.standardLibrary, "libstdc++ (C++11 ABI)");
}

TEST(ModuleLoaderTest, ModuleNotInLibrary) {
  EXPECT_EQ(loadError(manifest({libraryJson("file", kAllocatorSo, moduleJson("harvest_drf"))})),
            "module library '" + kAllocatorSo +
                "' has no module 'harvest_drf'; it provides 'harvest_hierarchical'");
  EXPECT_EQ(loadCode(manifest({libraryJson("file", kAllocatorSo, moduleJson("harvest_drf"))})),
            StatusCode::kNotFound);
}

// --- The real module ---------------------------------------------------------------------------

TEST(ModuleLoaderTest, LoadsRealLibraryByFile) {
  expectLoadedOrUnavailable(loadAllocator(manifest({realLibrary()}), ""), kAllocatorSo);
}

TEST(ModuleLoaderTest, LoadsRealLibraryByNameFromLibraryDir) {
  const std::string modules =
      manifest({libraryJson("name", "harvest_allocator", moduleJson("harvest_hierarchical"))});
  expectLoadedOrUnavailable(loadAllocator(modules, "harvest_hierarchical", kAllocatorSoDir),
                            kAllocatorSoDir + "/libharvest_allocator.so");
}

TEST(ModuleLoaderTest, LoadsFromManifestFile) {
  const std::string path = writeFile("modules.json", manifest({realLibrary()}));
  expectLoadedOrUnavailable(loadAllocator(path, "harvest_hierarchical"), kAllocatorSo);
}

TEST(ModuleLoaderTest, ChoosesModuleByName) {
  // The same library listed twice under two names is two libraries to the manifest; the
  // library itself knows only one of them.
  const std::string modules =
      manifest({realLibrary(), libraryJson("name", "harvest_allocator", moduleJson("other"))});
  expectLoadedOrUnavailable(loadAllocator(modules, "harvest_hierarchical"), kAllocatorSo);
  EXPECT_THAT(loadError(modules, "other", kAllocatorSoDir),
              HasSubstr("has no module 'other'; it provides 'harvest_hierarchical'"));
}

TEST(ModuleLoaderTest, ParametersReachTheOptions) {
  Result<LoadedAllocator> loaded =
      loadAllocator(manifest({realLibrary({{"sorter", "random"},
                                           {"refuse_seconds", "2.5"},
                                           {"min_allocatable_resources", "cpus:1|mem:64"},
                                           {"fairness_excluded_resource_names", "gpus,fpgas"},
                                           {"revocable_stage", "false"},
                                           {"seed", "12345"}})}),
                    "");
  if (!loaded.ok() && loaded.message().find(kUnavailable) != std::string::npos) {
    GTEST_SKIP() << loaded.message();
  }
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const AllocatorOptions& options = loaded->options();
  EXPECT_EQ(options.sorter, "random");
  EXPECT_EQ(options.defaultRefuse, Duration::milliseconds(2500));
  EXPECT_EQ(options.minAllocatable,
            (std::vector<Quantities>{Quantities{{kinds::kCpus, Scalar::fromUnits(1)}},
                                     Quantities{{kinds::kMem, Scalar::fromUnits(64)}}}));
  EXPECT_EQ(options.fairnessExcludedKinds, (std::vector<std::string>{"gpus", "fpgas"}));
  EXPECT_FALSE(options.revocableStage);
  EXPECT_EQ(options.seed, 12345u);
  EXPECT_FALSE(options.clock);
}

TEST(ModuleLoaderTest, BadParameterValue) {
  EXPECT_EQ(loadError(manifest({realLibrary({{"refuse_seconds", "abc"}})})),
            "module 'harvest_hierarchical' from '" + kAllocatorSo +
                "': bad value 'abc' for parameter 'refuse_seconds': expected a non-negative "
                "number");
}

TEST(ModuleLoaderTest, UnknownParameter) {
  EXPECT_THAT(loadError(manifest({realLibrary({{"clock", "real"}})})),
              StartsWith("module 'harvest_hierarchical' from '" + kAllocatorSo +
                         "': unknown parameter 'clock' (value 'real'); known parameters: "));
}

TEST(ModuleLoaderTest, LibraryIsClosedAfterTheAllocator) {
  auto isLoaded = [] {
    void* handle = dlopen(kAllocatorSo.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle != nullptr) dlclose(handle);
    return handle != nullptr;
  };
  ASSERT_FALSE(isLoaded());
  {
    Result<LoadedAllocator> first = loadAllocator(manifest({realLibrary()}), "");
    if (!first.ok()) GTEST_SKIP() << first.message();
    EXPECT_TRUE(isLoaded());
    LoadedAllocator a = std::move(first).value();
    Result<LoadedAllocator> second = loadAllocator(manifest({realLibrary()}), "");
    ASSERT_TRUE(second.ok()) << second.message();
    LoadedAllocator b = std::move(second).value();
    // Replaces a's allocator while both references to the library are held, then moves b's
    // reference into a: the library must stay open for a's remaining allocator.
    a = std::move(b);
    EXPECT_EQ(b.get(), nullptr);
    ASSERT_NE(a.get(), nullptr);
    a->pause();
    a->resume();
    EXPECT_TRUE(isLoaded());
  }
  EXPECT_FALSE(isLoaded());
}

// --- The entry point, below the loader -----------------------------------------------------------

TEST(ModuleEntryPointTest, BuiltinTable) {
  const AllocatorModule* module = builtinAllocatorModule();
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->apiVersion, kModuleApiVersion);
  EXPECT_STREQ(module->name, "harvest_hierarchical");
  EXPECT_STREQ(module->description, "Hierarchical DRF allocator with quota and a revocable stage");
  int count = 0;
  EXPECT_EQ(harvest_allocator_module_v1(&count), module);
  EXPECT_EQ(count, 1);
}

TEST(ModuleEntryPointTest, CreateParsesParametersBeforeBuildingTheAllocator) {
  void* handle = dlopen(kAllocatorSo.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using EntryPoint = const AllocatorModule* (*)(int*);
  auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, kModuleSymbol));
  ASSERT_NE(entry, nullptr);
  int count = 0;
  const AllocatorModule* table = entry(&count);
  ASSERT_EQ(count, 1);
  // The library's own table, not the test binary's built-in one.
  EXPECT_NE(table, builtinAllocatorModule());

  AllocatorOptions options;
  std::string error;
  EXPECT_EQ(table->create({{"seed", "x"}}, &options, &error), nullptr);
  EXPECT_EQ(error,
            "bad value 'x' for parameter 'seed': expected an unsigned 64-bit decimal integer");
  // Null out-pointers are tolerated.
  EXPECT_EQ(table->create({{"seed", "x"}}, nullptr, nullptr), nullptr);

  error.clear();
  std::unique_ptr<Allocator> allocator(table->create({{"seed", "77"}}, &options, &error));
  EXPECT_EQ(options.seed, 77u);  // Filled whether or not this build has an allocator.
  if (allocator == nullptr) {
    EXPECT_EQ(error, kUnavailable);
  }
  allocator.reset();
  dlclose(handle);
}

TEST(ModuleEntryPointTest, ModuleSharesTheHostsResourceKinds) {
  // A kind interned here first gets the next id in the host's table; were the library using a
  // table of its own, its next id would be that same number for a different name.
  KindId hostKind = 0;
  ASSERT_TRUE(kinds::intern("module_test_host_only_kind", &hostKind));

  void* handle = dlopen(kAllocatorSo.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using EntryPoint = const AllocatorModule* (*)(int*);
  auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, kModuleSymbol));
  ASSERT_NE(entry, nullptr);
  int count = 0;
  const AllocatorModule* table = entry(&count);
  AllocatorOptions options;
  std::string error;
  std::unique_ptr<Allocator> allocator(table->create(
      {{"min_allocatable_resources", "module_test_library_kind:1"}}, &options, &error));
  allocator.reset();
  ASSERT_EQ(options.minAllocatable.size(), 1u);
  ASSERT_EQ(options.minAllocatable[0].size(), 1u);
  const KindId libraryKind = options.minAllocatable[0].begin()->first;
  EXPECT_NE(libraryKind, hostKind);
  EXPECT_EQ(kinds::name(libraryKind), "module_test_library_kind");
  dlclose(handle);
}

}  // namespace
}  // namespace harvest
