// MasterObserver: told of every change an operator watching the cluster sees (the operator
// API's SUBSCRIBE stream). Called synchronously, after the change, from the master's thread;
// the observer reads the master's views for the details and must not call back into it.
#pragma once

#include <string>

#include "agent/runtime/task.h"

namespace harvest::master {

class MasterObserver {
 public:
  virtual ~MasterObserver() = default;
  virtual void taskAdded(const std::string& framework, const std::string& task) = 0;
  virtual void taskUpdated(const agent::TaskStatus& status) = 0;
  virtual void agentAdded(const std::string& agent) = 0;
  virtual void agentRemoved(const std::string& agent) = 0;
  virtual void frameworkAdded(const std::string& framework) = 0;
  virtual void frameworkUpdated(const std::string& framework) = 0;
  virtual void frameworkRemoved(const std::string& framework) = 0;
};

}  // namespace harvest::master
