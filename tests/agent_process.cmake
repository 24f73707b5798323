# Included from tests/CMakeLists.txt: harvest-agent (agent/process) against a fake master.
harvest_test(agent_process_test
  SOURCES agent_process_test.cpp
  LIBS harvest_agent_process)

# The executable itself: usage, one line naming a bad flag (exit 2), a run with no master
# that ends at --duration, and a graceful stop on SIGTERM (both exit 0). Each runs under sh so
# the exit status can be matched along with the output.
set(agent $<TARGET_FILE:harvest-agent>)
function(agent_main_test name script expected)
  add_test(NAME AgentProcessMain.${name} COMMAND sh -c "${script}")
  set_tests_properties(AgentProcessMain.${name} PROPERTIES PASS_REGULAR_EXPRESSION "${expected}")
endfunction()
agent_main_test(Help "${agent} --help; echo rc=$?" "--resources=RESOURCES.*rc=0")
agent_main_test(BadResources "${agent} --id=a1 --resources=cpus:x 2>&1; echo rc=$?"
  "harvest-agent: bad value 'cpus:x' for --resources: [^\n]*\nrc=2")
agent_main_test(BadMaster "${agent} --id=a1 --resources=cpus:1 --master=host 2>&1; echo rc=$?"
  "harvest-agent: bad value 'host' for --master: [^\n]*\nrc=2")
agent_main_test(MissingId "${agent} --resources=cpus:1 2>&1; echo rc=$?"
  "harvest-agent: --id is required[^\n]*\nrc=2")
agent_main_test(RunsForItsDuration
  "${agent} --id=a1 --resources=cpus:1 --master=127.0.0.1:1 --duration=0.5 2>&1; echo rc=$?"
  "retrying in 100 ms.*rc=0")
agent_main_test(StopsOnSigterm
  "${agent} --id=a1 --resources=cpus:1 --master=127.0.0.1:1 2>&1 & sleep 0.3; kill -TERM $!; wait $!; echo rc=$?"
  "stopping on signal 15.*rc=0")
agent_main_test(BadCredential "${agent} --id=a1 --resources=cpus:1 --credential=/nonexistent 2>&1; echo rc=$?"
  "harvest-agent: bad value '/nonexistent' for --credential: cannot read the file\nrc=2")
