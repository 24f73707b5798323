# Included from bench/CMakeLists.txt: eviction decision and ledger bookkeeping.
harvest_bench(agent_bench agent_bench.cpp)
target_link_libraries(agent_bench PRIVATE harvest_agent)
