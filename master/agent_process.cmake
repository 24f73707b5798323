# Included from master/CMakeLists.txt: harvest-agent, an agent as its own process talking to
# harvest-master over HTTP (protos/agent_api.proto). Sources live in agent/process/.
add_library(harvest_agent_process STATIC
  ${CMAKE_SOURCE_DIR}/agent/process/agent_process.cpp
)
target_link_libraries(harvest_agent_process PUBLIC harvest_master harvest_http glog::glog)

add_executable(harvest-agent ${CMAKE_SOURCE_DIR}/agent/process/harvest_agent_main.cpp)
target_link_libraries(harvest-agent PRIVATE harvest_agent_process)
