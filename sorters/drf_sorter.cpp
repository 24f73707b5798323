#include "sorters/drf_sorter.h"

#include <glog/logging.h>

#include <algorithm>
#include <memory>

namespace harvest {

DrfSorter::DrfSorter() : SorterTree(SiblingOrder::kByShare) {}

std::span<const ClientId> DrfSorter::sort() {
  restoreSiblingOrder();
  ClientId moved;
  switch (takeOrderChange(&moved)) {
    case OrderChange::kNone:
      break;
    case OrderChange::kOneRootClientMoved:
      placeAgain(moved);
      break;
    case OrderChange::kAny:
      order_.clear();
      appendActiveLeaves(kRoot);
      break;
  }
  return order_;
}

// The other clients are still in order, so `moved` is taken out and put back where its key
// now belongs. It was just offered to, so it is usually found near the front.
void DrfSorter::placeAgain(ClientId moved) {
  const auto at = std::find(order_.begin(), order_.end(), moved);
  CHECK(at != order_.end()) << "moved sorter client " << moved << " missing from the order";
  order_.erase(at);
  order_.insert(std::partition_point(order_.begin(), order_.end(),
                                     [&](ClientId other) { return sortsBefore(other, moved); }),
                moved);
}

void DrfSorter::appendActiveLeaves(NodeId node) {
  childrenOf(node).visitActiveUntil([&](const Child& child) {
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
  return childrenOf(node).visitActiveUntil([&](const Child& child) {
    return child.client != kNoClient ? visit(child.client) : visitActiveLeaves(child.node, visit);
  });
}

std::unique_ptr<Sorter> makeDrfSorter() {
  return std::make_unique<DrfSorter>();
}

}  // namespace harvest
