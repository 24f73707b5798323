# Included from master/CMakeLists.txt: loading the allocator from a modules manifest.
add_library(harvest_module_loader STATIC module_loader.cpp)
target_link_libraries(harvest_module_loader PUBLIC
  harvest_builtin_module
  harvest_allocator_core
  harvest_protos
  protobuf::libprotobuf
  glog::glog
  ${CMAKE_DL_LIBS})
# A loaded module binds to the executable's copy of the resource model and the protos (see
# allocator/module.cmake), so whatever links the loader must export its symbols; carrying the
# flag here means the master and tests cannot forget it.
target_link_options(harvest_module_loader INTERFACE
  $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-rdynamic>)
