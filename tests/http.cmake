# Included from tests/CMakeLists.txt: the master's HTTP layer (master/http).
harvest_test(http_test
  SOURCES
    http_request_parser_test.cpp
    http_response_parser_test.cpp
    http_recordio_test.cpp
    http_basic_auth_test.cpp
    http_server_test.cpp
  LIBS harvest_http)

# Mutation fuzzing with a seeded PRNG; a plain executable, since gcc has no libFuzzer.
# `http_fuzz [iterations] [seed]` runs longer campaigns.
add_executable(http_fuzz http_fuzz.cpp)
target_link_libraries(http_fuzz PRIVATE harvest_http)
add_test(NAME http_fuzz COMMAND http_fuzz 20000)

# Optional coverage-guided fuzzing with clang's libFuzzer, built by calling clang++ directly so
# the gcc build never depends on it: -DHARVEST_HTTP_LIBFUZZER=ON, then
# `ninja http_libfuzzer && ./tests/http_fuzz_libfuzzer -max_total_time=60`.
option(HARVEST_HTTP_LIBFUZZER "Build tests/http_fuzz_libfuzzer with clang++ -fsanitize=fuzzer" OFF)
if(HARVEST_HTTP_LIBFUZZER)
  find_program(HARVEST_CLANGXX clang++)
  if(NOT HARVEST_CLANGXX)
    message(FATAL_ERROR "HARVEST_HTTP_LIBFUZZER needs clang++")
  endif()
  set(libfuzzer_sources
    ${CMAKE_CURRENT_SOURCE_DIR}/http_fuzz.cpp
    ${CMAKE_SOURCE_DIR}/master/http/basic_auth.cpp
    ${CMAKE_SOURCE_DIR}/master/http/recordio.cpp
    ${CMAKE_SOURCE_DIR}/master/http/request_parser.cpp
    ${CMAKE_SOURCE_DIR}/master/http/response_parser.cpp)
  add_custom_command(
    OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/http_fuzz_libfuzzer
    COMMAND ${HARVEST_CLANGXX} -std=c++20 -g -O1 -DHARVEST_LIBFUZZER
            -fsanitize=fuzzer,address,undefined -I${CMAKE_SOURCE_DIR}
            ${libfuzzer_sources} -lglog -o ${CMAKE_CURRENT_BINARY_DIR}/http_fuzz_libfuzzer
    DEPENDS ${libfuzzer_sources}
    COMMENT "Building http_libfuzzer with clang++ and libFuzzer")
  add_custom_target(http_libfuzzer DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/http_fuzz_libfuzzer)
endif()
