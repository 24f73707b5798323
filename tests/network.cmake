# Included from tests/CMakeLists.txt: the network master (master/network_master.h) over
# loopback, with fake agents and framework clients speaking HTTP to it.
harvest_test(network_test SOURCES network_test.cpp LIBS harvest_network)
