// DrfSorter: weighted hierarchical Dominant Resource Fairness.
//
// Siblings are ordered by (subtree dominant share / path weight, subtree allocation count,
// path); sort() is the depth-first walk of that ordered tree, skipping inactive clients. The
// tree keeps each sibling array sorted as allocations change (see sorter_tree.h), so sort()
// only re-walks the tree when some active subtree actually moved, and otherwise hands back
// the previous result; when the one change is a client directly under the root moving (a
// flat role sorter after an offer), it moves that client within the previous result.
#pragma once

#include <span>
#include <vector>

#include "sorters/sorter_tree.h"

namespace harvest {

class DrfSorter final : public SorterTree {
 public:
  DrfSorter();

  std::span<const ClientId> sort() override;
  void visitInOrder(ClientVisitor visit) override;

 private:
  void appendActiveLeaves(NodeId node);
  void placeAgain(ClientId moved);
  // False once `visit` asked to stop.
  bool visitActiveLeaves(NodeId node, ClientVisitor visit) const;

  std::vector<ClientId> order_;
};

}  // namespace harvest
