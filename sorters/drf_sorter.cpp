#include "sorters/drf_sorter.h"

#include <memory>

namespace harvest {

DrfSorter::DrfSorter() : SorterTree(SiblingOrder::kByShare) {}

std::span<const ClientId> DrfSorter::sort() {
  restoreSiblingOrder();
  if (takeOrderChanged()) {
    order_.clear();
    appendActiveLeaves(kRoot);
  }
  return order_;
}

void DrfSorter::appendActiveLeaves(NodeId node) {
  for (const Child& child : childrenOf(node)) {
    if (activeLeavesUnder(child.node) == 0) continue;
    if (child.client != kNoClient) {
      order_.push_back(child.client);
    } else {
      appendActiveLeaves(child.node);
    }
  }
}

void DrfSorter::visitInOrder(ClientVisitor visit) {
  restoreSiblingOrder();
  visitActiveLeaves(kRoot, visit);
}

bool DrfSorter::visitActiveLeaves(NodeId node, ClientVisitor visit) const {
  for (const Child& child : childrenOf(node)) {
    if (activeLeavesUnder(child.node) == 0) continue;
    if (child.client != kNoClient) {
      if (!visit(child.client)) return false;
    } else if (!visitActiveLeaves(child.node, visit)) {
      return false;
    }
  }
  return true;
}

std::unique_ptr<Sorter> makeDrfSorter() {
  return std::make_unique<DrfSorter>();
}

}  // namespace harvest
