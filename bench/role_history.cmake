# Included from bench/CMakeLists.txt: the host-affinity role history.
harvest_bench(role_history_bench role_history_bench.cpp)
target_link_libraries(role_history_bench PRIVATE harvest_role_history)
