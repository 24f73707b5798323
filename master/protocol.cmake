# Included from master/CMakeLists.txt: the v1 scheduler API codec (decode and check Calls,
# negotiate the response encoding, encode Events). No master state, so tests and the HTTP
# layer link it without the master core.
add_library(harvest_scheduler_codec STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/call_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/event_json.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/json_text.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/scheduler_codec.cpp
)
target_link_libraries(harvest_scheduler_codec PUBLIC harvest_protos harvest_resources harvest_http
                      glog::glog)
