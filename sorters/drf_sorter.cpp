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
  childrenOf(node).visitUntil([&](const Child& child) {
    if (activeLeavesUnder(child.node) == 0) return true;
    if (child.client != kNoClient) {
      order_.push_back(child.client);
    } else {
      appendActiveLeaves(child.node);
    }
    return true;
  });
}

void DrfSorter::visitInOrder(ClientVisitor visit) {
  restoreSiblingOrder();
  visitActiveLeaves(kRoot, visit);
}

bool DrfSorter::visitActiveLeaves(NodeId node, ClientVisitor visit) const {
  return childrenOf(node).visitUntil([&](const Child& child) {
    if (activeLeavesUnder(child.node) == 0) return true;
    return child.client != kNoClient ? visit(child.client) : visitActiveLeaves(child.node, visit);
  });
}

std::unique_ptr<Sorter> makeDrfSorter() {
  return std::make_unique<DrfSorter>();
}

}  // namespace harvest
