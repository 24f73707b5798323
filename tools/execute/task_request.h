// What harvest-execute asks for, and the part of an offer that holds it.
//
// A request is Mesos's resource string restricted to scalars: `cpus:1;mem:128` takes
// unreserved resources, `cpus(analytics):2` resources reserved to `analytics`. With
// `revocable`, every amount must come from revocable resources (an idle reservation lent, or
// usage slack), and never from regular ones; without it, never from revocable ones.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "protos/mesos.pb.h"

namespace harvest::execute {

struct RequestedScalar {
  std::string name;
  std::string role;  // "*": unreserved.
  double amount = 0;
};

struct TaskRequest {
  std::vector<RequestedScalar> scalars;
  bool revocable = false;
};

// "cpus:1;mem(web):128": each item NAME[(ROLE)]:AMOUNT with AMOUNT > 0, each NAME(ROLE) once.
Result<TaskRequest> parseTaskRequest(std::string_view text, bool revocable);

// The resources of `offer` the task takes (copies of the offer's, with the amounts taken), or
// nullopt if the offer cannot hold all of it.
std::optional<std::vector<v1::Resource>> take(const v1::Offer& offer, const TaskRequest& request);

}  // namespace harvest::execute
