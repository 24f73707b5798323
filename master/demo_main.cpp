// harvest-demo: a small, deterministic walk through the foundation. It parses agents from
// Mesos resource strings, hands out allocations round by round to whichever role the
// weighted DRF sorter puts first, and prints the shares. Replaced by harvest-master later.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "resources/parse.h"
#include "sorters/sorter.h"

using namespace harvest;

int main() {
  const std::vector<std::string> agents = {
      "cpus:24;mem:4096;disk:4096;ports:[31000-32000]",
      "cpus:24;mem:4096;disk:4096;ports:[31000-32000]",
      "cpus:16;mem:8192;disk:2048;cpus(analytics):8;mem(analytics):8192",
      "cpus:8;mem:16384;gpus:2",
  };
  std::unique_ptr<Sorter> sorter = makeDrfSorter();
  sorter->excludeKind(kinds::kGpus);
  Resources cluster;
  for (const std::string& text : agents) {
    Result<Resources> agent = parseResources(text);
    if (!agent.ok()) {
      std::fprintf(stderr, "bad agent '%s': %s\n", text.c_str(), agent.message().c_str());
      return 1;
    }
    cluster += *agent;
    sorter->addTotal(agent->quantities());
  }
  std::printf("cluster: %s\n\n", cluster.toString().c_str());

  struct Role {
    const char* name;
    double weight;
    const char* task;
  };
  const std::vector<Role> roles = {
      {"web", 1, "cpus:2;mem:256"}, {"batch", 2, "cpus:4;mem:512"}, {"analytics", 1, "cpus:1;mem:2048"}};
  std::vector<ClientId> ids;
  for (const Role& role : roles) {
    sorter->updateWeight(role.name, role.weight);
    ids.push_back(sorter->add(role.name));
    sorter->activate(ids.back());
  }
  std::printf("%-6s %-10s %s\n", "round", "offered to", "shares after the round");
  for (int round = 1; round <= 12; ++round) {
    const ClientId first = sorter->sort().front();
    const Role& role = roles[std::find(ids.begin(), ids.end(), first) - ids.begin()];
    sorter->allocated(first, parseResources(role.task)->quantities());
    std::string shares;
    for (size_t i = 0; i < roles.size(); ++i) {
      char cell[64];
      std::snprintf(cell, sizeof(cell), "%s=%.3f ", roles[i].name, sorter->share(ids[i]));
      shares += cell;
    }
    std::printf("%-6d %-10s %s\n", round, role.name, shares.c_str());
  }
  std::printf("\nEvery round goes to the role with the lowest dominant share / weight.\n");
  return 0;
}
