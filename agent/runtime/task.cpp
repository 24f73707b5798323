#include "agent/runtime/task.h"

namespace harvest::agent {

const char* toString(TaskState state) {
  switch (state) {
    case TaskState::kStaging:
      return "TASK_STAGING";
    case TaskState::kRunning:
      return "TASK_RUNNING";
    case TaskState::kFinished:
      return "TASK_FINISHED";
    case TaskState::kFailed:
      return "TASK_FAILED";
    case TaskState::kKilled:
      return "TASK_KILLED";
    case TaskState::kLost:
      return "TASK_LOST";
    case TaskState::kError:
      return "TASK_ERROR";
    case TaskState::kUnknown:
      return "TASK_UNKNOWN";
    case TaskState::kGoneByOperator:
      return "TASK_GONE_BY_OPERATOR";
    case TaskState::kGone:
      return "TASK_GONE";
    case TaskState::kStarting:
      return "TASK_STARTING";
    case TaskState::kKilling:
      return "TASK_KILLING";
  }
  return "TASK_UNKNOWN";
}

}  // namespace harvest::agent
