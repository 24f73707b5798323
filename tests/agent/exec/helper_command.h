// The agent/exec tests' command for exec_test_helper (whose path the test target defines as
// EXEC_TEST_HELPER): a process that spins or holds memory by a known amount.
#pragma once

#include <string>

#include "protos/mesos.pb.h"

namespace harvest::agent::testing {

// exec_test_helper in `mode` ("spin" for `amount` ms of cpu, "hold" for `amount` MiB resident),
// argv form.
inline v1::CommandInfo helperCommand(const std::string& mode, int amount) {
  v1::CommandInfo command;
  command.set_shell(false);
  command.set_value(EXEC_TEST_HELPER);
  for (const std::string& argument :
       {std::string(EXEC_TEST_HELPER), mode, std::to_string(amount)}) {
    command.add_arguments(argument);
  }
  return command;
}

}  // namespace harvest::agent::testing
