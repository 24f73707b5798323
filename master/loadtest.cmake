# Included from master/CMakeLists.txt: harvest-loadtest, a bounded load test of the network
# master (issue 9): fake agents and v1 schedulers over loopback against an in-process master
# (or --master=HOST:PORT), measuring scheduler calls/s, offer->launch latency and RSS.
add_executable(harvest-loadtest ${CMAKE_CURRENT_SOURCE_DIR}/loadtest_main.cpp)
target_link_libraries(harvest-loadtest PRIVATE harvest_network)

# Small and bounded: a few seconds, also under ASan. It exits non-zero on any HTTP error or a
# launch that never reached its agent.
add_test(NAME loadtest_small COMMAND harvest-loadtest --agents=100 --frameworks=20 --rounds=5)
set_tests_properties(loadtest_small PROPERTIES TIMEOUT 120)
