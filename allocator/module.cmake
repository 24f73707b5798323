# Included from allocator/CMakeLists.txt.

# Options from manifest parameters are part of the core: tests and benches build options the
# same way a manifest does.
target_sources(harvest_allocator_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/options.cpp)

# The built-in module, linked into the master (through harvest_module_loader).
add_library(harvest_builtin_module STATIC module.cpp)
target_link_libraries(harvest_builtin_module PUBLIC harvest_allocator_core)

# libharvest_allocator.so: the same module as a loadable library.
#
# It carries its own allocator code (core and sorters, with every symbol local so the master's
# copies never replace them), but NOT the resource model or the generated protos: those hold
# process-wide state (interned kinds and reservation pools, protobuf's descriptor registry)
# that must be one copy shared with the master. A second copy of mesos.pb.cc aborts the
# process at dlopen() ("File already exists in database: mesos.proto"), and a second kinds or
# pools table would give ids the master's Resources do not mean. They are left undefined here
# and bound to the master's at load time, which needs a master linked with ENABLE_EXPORTS.
add_library(harvest_allocator SHARED module.cpp)
set_target_properties(harvest_allocator PROPERTIES
  OUTPUT_NAME harvest_allocator
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
# The core's compile requirements (include dirs, definitions) without its link closure.
target_include_directories(harvest_allocator PRIVATE
  $<TARGET_PROPERTY:harvest_allocator_core,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(harvest_allocator PRIVATE
  $<TARGET_PROPERTY:harvest_allocator_core,INTERFACE_COMPILE_DEFINITIONS>)
target_link_libraries(harvest_allocator PRIVATE
  $<TARGET_FILE:harvest_allocator_core>
  $<TARGET_FILE:harvest_sorters>
  glog::glog
  protobuf::libprotobuf
  # Symbols pulled from the two archives become local: only the entry symbol is exported.
  -Wl,--exclude-libs,ALL)
add_dependencies(harvest_allocator harvest_allocator_core harvest_sorters)
