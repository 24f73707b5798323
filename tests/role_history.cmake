# Included from tests/CMakeLists.txt: the host-affinity role history.
harvest_test(role_history_test
  SOURCES role_history_test.cpp role_history_index_test.cpp role_history_policy_test.cpp
          role_history_persistence_test.cpp role_history_property_test.cpp
  LIBS harvest_role_history)
