# Included from master/CMakeLists.txt: the master's HTTP/1.1 layer (server, client, parsers,
# RecordIO, Basic authentication). Plain POSIX sockets and epoll; no HTTP library.
add_library(harvest_http STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/http/basic_auth.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/http_client.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/http_server.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/recordio.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/request_parser.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/response_parser.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/response_writer.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/http/server_handles.cpp
)
target_link_libraries(harvest_http PUBLIC glog::glog)
