# Included from tests/CMakeLists.txt: the allocator options and the module loader.

harvest_test(allocator_options_test
  SOURCES allocator_options_test.cpp
  LIBS harvest_allocator_core GTest::gmock)

# Libraries the loader must refuse; they link nothing so they stand for any foreign build.
add_library(harvest_fake_module_no_symbol SHARED fake_module_no_symbol.cpp)
add_library(harvest_fake_module_bad_version SHARED fake_module_bad_version.cpp)

harvest_test(module_loader_test
  SOURCES module_loader_test.cpp
  LIBS harvest_module_loader GTest::gmock ${CMAKE_DL_LIBS})
# Exports its symbols to the modules it loads through harvest_module_loader's link options,
# exactly as the master does.
target_compile_definitions(module_loader_test PRIVATE
  HARVEST_ALLOCATOR_SO="$<TARGET_FILE:harvest_allocator>"
  HARVEST_ALLOCATOR_SO_DIR="$<TARGET_FILE_DIR:harvest_allocator>"
  HARVEST_FAKE_NO_SYMBOL_SO="$<TARGET_FILE:harvest_fake_module_no_symbol>"
  HARVEST_FAKE_BAD_VERSION_SO="$<TARGET_FILE:harvest_fake_module_bad_version>")
add_dependencies(module_loader_test
  harvest_allocator harvest_fake_module_no_symbol harvest_fake_module_bad_version)
