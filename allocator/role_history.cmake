# Included from allocator/CMakeLists.txt: the host-affinity role history. A standalone
# library the allocator core links and drives; it knows nothing of the allocator itself.
add_library(harvest_role_history STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/history_available_list.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_checksum.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_codec.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_entry_index.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_file.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_policy.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/history_store.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/role_history.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/role_history_persist.cpp
)
target_link_libraries(harvest_role_history PUBLIC harvest_resources harvest_protos glog::glog)
