# Included from master/CMakeLists.txt: harvest-master on the network (issue 9) — the v1
# scheduler HTTP API, the agent endpoints and the operator endpoints.
add_library(harvest_network STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/authorizer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http_scheduler.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/network_master.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/remote_agent.cpp
)
target_link_libraries(harvest_network PUBLIC harvest_master harvest_http harvest_scheduler_codec)
target_link_libraries(harvest-master PRIVATE harvest_network)
