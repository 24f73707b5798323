// ReferenceDrf: the order a DRF sorter must produce, recomputed from scratch from every
// client's allocation (every share, every subtree sum, one full sort per level), for the
// randomized sorter tests to compare the incremental sorter against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "sorters/client_id.h"

namespace harvest {

class ReferenceDrf {
 public:
  struct Client {
    std::string name;
    Quantities allocation;
    uint64_t allocations = 0;
    bool active = false;
  };

  std::map<ClientId, Client> clients;
  std::map<std::string, double> weights;
  Quantities total;
  std::set<KindId> excluded;

  double shareOf(const Quantities& allocation, const std::string& path) const {
    double dominant = 0;
    for (const auto& [kind, amount] : allocation) {
      const int64_t totalMilli = total.get(kind).milli();
      if (excluded.contains(kind) || totalMilli <= 0) continue;
      dominant = std::max(dominant, static_cast<double>(amount.milli()) / totalMilli);
    }
    auto weight = weights.find(path);
    return dominant / (weight == weights.end() ? 1.0 : weight->second);
  }

  // Everything at or below one path, summed from the clients.
  struct Subtree {
    Quantities allocation;
    uint64_t allocations = 0;
    bool nested = false;             // Some client lies strictly below the path.
    std::optional<ClientId> client;  // The client named by the path, if any.
  };

  std::map<std::string, Subtree> subtrees() const {
    std::map<std::string, Subtree> out;
    for (const auto& [id, client] : clients) {
      for (size_t slash = client.name.find('/');; slash = client.name.find('/', slash + 1)) {
        Subtree& subtree = out[client.name.substr(0, slash)];
        subtree.allocation += client.allocation;
        subtree.allocations += client.allocations;
        if (slash == std::string::npos) {
          subtree.client = id;
          break;
        }
        subtree.nested = true;
      }
    }
    return out;
  }

  std::vector<ClientId> order() const {
    const std::map<std::string, Subtree> all = subtrees();
    std::map<std::string, std::vector<std::string>> childrenOf;
    for (const auto& [path, subtree] : all) {
      const size_t slash = path.rfind('/');
      childrenOf[slash == std::string::npos ? "" : path.substr(0, slash)].push_back(path);
    }
    std::vector<ClientId> out;
    appendOrder("", all, childrenOf, &out);
    return out;
  }

 private:
  struct Entry {
    double share;
    uint64_t allocations;
    std::string path;
    std::optional<ClientId> leaf;  // Set for leaves, virtual or not.
  };

  void appendOrder(const std::string& path, const std::map<std::string, Subtree>& all,
                   std::map<std::string, std::vector<std::string>>& childrenOf,
                   std::vector<ClientId>* out) const {
    std::vector<Entry> entries;
    if (!path.empty() && all.at(path).client) {
      // Mesos's implicit child "." of the path: its own weight (the default) and name.
      const Client& client = clients.at(*all.at(path).client);
      const std::string virtualPath = path + "/.";
      entries.push_back({shareOf(client.allocation, virtualPath), client.allocations, virtualPath,
                         all.at(path).client});
    }
    for (const std::string& child : childrenOf[path]) {
      const Subtree& subtree = all.at(child);
      entries.push_back({shareOf(subtree.allocation, child), subtree.allocations, child,
                         subtree.nested ? std::nullopt : subtree.client});
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      if (a.share != b.share) return a.share < b.share;
      if (a.allocations != b.allocations) return a.allocations < b.allocations;
      return a.path < b.path;
    });
    for (const Entry& entry : entries) {
      if (!entry.leaf) {
        appendOrder(entry.path, all, childrenOf, out);
      } else if (clients.at(*entry.leaf).active) {
        out->push_back(*entry.leaf);
      }
    }
  }
};

}  // namespace harvest
