# Included from tests/CMakeLists.txt: the agent-side ledger, eviction policy, estimator, QoS
# controller, wire conversions, and the randomized property test.
harvest_test(agent_test
  SOURCES
    agent_eviction_policy_test.cpp
    agent_ledger_test.cpp
    agent_estimator_qos_test.cpp
    agent_messages_test.cpp
    agent_property_test.cpp
  LIBS harvest_agent)
