// SorterTree: the client hierarchy, allocation bookkeeping and shares that the DRF and random
// sorters have in common. Subclasses only decide the order sort() returns.
//
// Every proper prefix of a client name ("a" and "a/b" for "a/b/c") is an internal node whose
// allocation is the sum of its subtree. A client whose name is also such a prefix becomes a
// "virtual leaf": a leaf child of the internal node with the same path, so the client's own
// allocation and its nested clients compete as siblings. As in Mesos, where that leaf is the
// child "." of the internal node, it has the default weight (the path's weight applies to the
// whole subtree against its siblings, not to the client against its own children) and on ties
// it sorts as if its path were "<path>/.".
//
// In SiblingOrder::kByShare mode every internal node keeps its children sorted by
// (share, allocation count, path). The path tie-break is precomputed as an integer rank among
// the siblings (see Node::rank), so a comparison reads three numbers from the child array and
// never a string; kInsertion (the random sorter) leaves them unordered. A change
// to one client's allocation moves that leaf and each ancestor within its parent's list (see
// SiblingList: a search of the entry's own block, a galloping search for the new place and a
// memmove within one or two blocks), so the cost is O(depth * log siblings) comparisons. Changes
// that alter every share at once (totals, weights, excluded kinds) only mark the order stale;
// restoreSiblingOrder() re-sorts it all.
//
// Each child list flags the children whose subtree holds an active client (SiblingList's
// setActive, kept by propagateActive), so a walk in order passes blocks of inactive siblings
// whole, while activating or deactivating a client stays a counter update per level.
//
// Allocations are kept as fixed-width rows of milli amounts indexed by KindId (see amounts_),
// not as Quantities: kinds are few and dense, so adding an allocation and computing a dominant
// share are straight loops, with none of the merging of kind lists that Quantities does.
//
// In SiblingOrder::kByShare mode, what clients give back (unallocated) is not placed at once:
// it is added to a second row per node (returned_, the client's and every ancestor's), and the
// keys and places are brought up to date when the order is next asked for (sort,
// visitInOrder), before the next allocation or update, or when the tree's shape changes.
// Declines come in bursts between allocation cycles, a framework usually giving back several
// offers in one call, so a client is repositioned once per burst instead of once per offer.
// Everything that reports an allocation or a share (share, pathShare, allocation, and the
// checks of unallocated and update) reads it net of what was given back, so the deferral
// shows only in the cost. Placing before every allocation keeps both rows bounded by what the
// clients hold.
//
// Precondition violations that can only come from an allocator bug (unknown or removed
// ClientId, adding an empty or existing name, unallocating more than a client holds, non-positive
// or non-finite weights) fail a glog CHECK.
#pragma once

#include <glog/logging.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "resources/kinds.h"
#include "resources/quantities.h"
#include "sorters/sibling_list.h"
#include "sorters/sorter.h"

namespace harvest {

class SorterTree : public Sorter {
 public:
  ClientId add(std::string_view name) override;
  void remove(ClientId client) override;
  std::optional<ClientId> find(std::string_view name) const override;
  const std::string& name(ClientId client) const override;
  size_t count() const override { return clientCount_; }

  void activate(ClientId client) override;
  void deactivate(ClientId client) override;
  bool isActive(ClientId client) const override;

  void updateWeight(std::string_view path, double weight) override;

  void allocated(ClientId client, const Quantities& quantities) override;
  // CHECK-fails unless the client holds `quantities`.
  void unallocated(ClientId client, const Quantities& quantities) override;
  // CHECK-fails unless the client holds `from`.
  void update(ClientId client, const Quantities& from, const Quantities& to) override;
  Quantities allocation(ClientId client) const override;

  void addTotal(const Quantities& quantities) override;
  void removeTotal(const Quantities& quantities) override;
  const Quantities& total() const override { return total_; }

  void excludeKind(KindId kind) override;

  double share(ClientId client) const override;
  // Weighted by the weight of `path` itself; for a client that is also a parent ("a" next to
  // "a/b") this is the whole subtree's share, share() the client's own.
  double pathShare(std::string_view path) const override;

 protected:
  using NodeId = uint32_t;
  static constexpr NodeId kRoot = 0;
  static constexpr NodeId kNoNode = UINT32_MAX;
  static constexpr ClientId kNoClient = UINT32_MAX;

  // One entry of an internal node's child list. The whole sort key (share, allocation count,
  // path rank) is kept inline so binary searches walk one contiguous 32-byte-per-entry array
  // and never touch the nodes or their path strings.
  struct Child {
    double share;
    uint64_t allocations;
    uint32_t rank;  // The node's Node::rank, copied so the tie-break stays in the array.
    NodeId node;
    ClientId client;  // kNoClient for internal nodes.
    uint32_t slot;    // Assigned by the SiblingList; the node's Node::slot.
  };

  enum class SiblingOrder { kByShare, kInsertion };
  explicit SorterTree(SiblingOrder order);

  const SiblingList<Child>& childrenOf(NodeId node) const { return nodes_[node].children; }
  // Number of active clients in the subtree of `node` (0 or 1 for a leaf).
  uint32_t activeLeavesUnder(NodeId node) const { return activeLeaves_[node]; }
  double weightOf(NodeId node) const { return nodes_[node].weight; }

  // Places what clients gave back since the last call, then (kByShare only) re-sorts every
  // child array if totals, weights or exclusions changed. Inline, as sort() and visitInOrder()
  // call it once per agent and only the first call after declines has anything to do.
  void restoreSiblingOrder() {
    placeReturns();
    if (sharesStale_) resortSiblings();
  }
  // How the active clients' order may have changed since the last call: not at all, by one
  // client of a flat tree (every client directly under the root) moving among its siblings
  // (`*moved`; the others kept their relative order), or in any way. Clears it.
  enum class OrderChange { kNone, kOneRootClientMoved, kAny };
  OrderChange takeOrderChange(ClientId* moved) {
    const OrderChange change = orderChange_;
    *moved = nodes_[movedRootLeaf_].client;
    orderChange_ = OrderChange::kNone;
    movedRootLeaf_ = kRoot;
    return change;
  }
  // Whether client `a` sorts before `b`, two clients directly under the root.
  bool sortsBefore(ClientId a, ClientId b) const {
    const Node& left = nodes_[leafOfClient_[a]];
    const Node& right = nodes_[leafOfClient_[b]];
    return keyLess(Child{left.share, left.allocations, left.rank, 0, a, 0},
                   Child{right.share, right.allocations, right.rank, 0, b, 0});
  }

 private:
  struct Node {
    std::string path;
    // Allocations made in the subtree; with `share` and `path` this is the node's sort key.
    uint64_t allocations = 0;
    // The share the node was last placed by in its parent's children. Equal to the current
    // share except while sharesStale_, while the node is its parent's only child, or while
    // something given back below it is not placed yet (returned_).
    double share = 0;
    double weight = 1;
    NodeId parent = kNoNode;
    ClientId client = kNoClient;  // Set for leaves only.
    bool inUse = false;
    bool virtualLeaf = false;  // The leaf of a client whose path is also its parent's.
    bool returning = false;    // A leaf listed in returningLeaves_.
    // Orders the node among its siblings by path (by last label, "." for a virtual leaf), the
    // last tie-break of the sort key. Ranks are strictly increasing along the parent's
    // `byPath`; removals leave gaps, which keep the order.
    uint32_t rank = 0;
    uint32_t slot = 0;            // Of the node's entry in its parent's children.
    SiblingList<Child> children;  // Internal nodes only.
    // Internal nodes only: the children by path, so an added child's rank is found by one
    // binary search over labels; renumbering on insertion is O(siblings), rare next to
    // allocation changes.
    std::vector<NodeId> byPath;
  };

  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view path) const { return std::hash<std::string_view>{}(path); }
  };
  template <typename Value>
  using PathMap = std::unordered_map<std::string, Value, PathHash, std::equal_to<>>;

  // Inline: every allocation change starts here.
  NodeId leafOf(ClientId client) const {
    CHECK(client < leafOfClient_.size() && leafOfClient_[client] != kNoNode)
        << "unknown sorter client id " << client;
    return leafOfClient_[client];
  }
  NodeId newNode(std::string_view path, NodeId parent, ClientId client);
  void freeNode(NodeId node);
  // Returns the internal node at `path` (child of `parent`), creating it or turning the leaf
  // of that name into a virtual leaf under it.
  NodeId internalNodeAt(std::string_view path, NodeId parent);
  void attach(NodeId node);
  void detach(NodeId node);
  // The label that orders a node among its siblings: its last path label, "." if virtual.
  std::string_view siblingLabel(NodeId node) const;
  // Gives `node` its rank among its parent's children, shifting the ranks after it.
  void rankAmongSiblings(NodeId node);
  // Puts `replacement` where `node` was in their parent's path order, with the same rank.
  void takeRankOf(NodeId node, NodeId replacement);
  Child& entryOf(NodeId node);
  // Undoes a virtual leaf once it is its parent's only child: the leaf takes the parent's place.
  void collapseIfOnlyVirtualLeaf(NodeId node);
  void propagateActive(NodeId leaf, int delta);
  // Records that active node `id` moved among its siblings.
  void noteMoved(NodeId id);

  // Applies `change(amounts, allocations)` to `from` and each of its ancestors below the
  // root, keeping every one of them at its sorted place. `amounts` is the node's row.
  template <typename Change>
  void changeAllocation(NodeId from, const Change& change);
  void refreshKey(NodeId node, double oldShare, uint64_t oldAllocations);
  // Brings the key of `parent`'s only child (if it has just one) up to date, before a
  // sibling joins it.
  void refreshOnlyChild(NodeId parent);
  // The share the node's key is made of: of amounts_, whatever was given back since.
  double shareOf(NodeId node) const { return shareOfRow(node, nullptr); }
  // The node's share now: net of what was given back and not yet placed.
  double currentShareOf(NodeId node) const { return shareOfRow(node, returnedOf(node)); }
  double shareOfRow(NodeId node, const int64_t* returned) const;
  int64_t* amountsOf(NodeId node) { return amounts_.data() + size_t{node} * kindSlots_; }
  const int64_t* amountsOf(NodeId node) const {
    return amounts_.data() + size_t{node} * kindSlots_;
  }
  int64_t* returnedOf(NodeId node) { return returned_.data() + size_t{node} * kindSlots_; }
  const int64_t* returnedOf(NodeId node) const {
    return returned_.data() + size_t{node} * kindSlots_;
  }
  // Inline: the order, allocations, updates and shape changes start here (the changes of
  // totals, weights and exclusions only mark the order stale, and the order places first),
  // and outside the first order after declines there is nothing to do.
  void placeReturns() {
    if (!returningLeaves_.empty()) placeEveryReturn();
  }
  void placeEveryReturn();
  // Widens every row (and the per-kind tables) so kind ids below `slots` have a column.
  void growKindSlots(size_t slots);
  // Makes room for every kind of `quantities`: they are sorted by kind, so the last is the
  // largest.
  void reserveKindSlots(const Quantities& quantities) {
    if (!quantities.empty() && (quantities.end() - 1)->first >= kindSlots_) {
      growKindSlots((quantities.end() - 1)->first + size_t{1});
    }
  }
  bool holds(NodeId node, const Quantities& quantities) const;
  Quantities allocationOf(NodeId node) const;
  // Inline: the binary searches of every allocation change call it ~20 times per sorter.
  static bool keyLess(const Child& a, const Child& b) {
    if (a.share != b.share) return a.share < b.share;
    if (a.allocations != b.allocations) return a.allocations < b.allocations;
    return a.rank < b.rank;
  }
  void setDivisor(KindId kind);
  void resortSiblings();
  // Turns the leaf `id`, just moved under the new internal node of its path, into that node's
  // virtual leaf: default weight, re-keyed among its new siblings.
  void makeVirtualLeaf(NodeId id);

  const SiblingOrder order_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> activeLeaves_;  // By NodeId; apart from Node so sort() scans stay small.
  std::vector<NodeId> freeNodes_;
  // In use, the root aside. While there is none the tree is flat: every active client is a
  // sibling of every other, so one that moved can be placed by comparing it with them.
  size_t internalNodes_ = 0;
  std::vector<NodeId> leafOfClient_;  // By ClientId; kNoNode for ids not in use.
  std::vector<ClientId> freeClients_;
  size_t clientCount_ = 0;
  PathMap<NodeId> nodeByPath_;  // Non-virtual nodes only.
  PathMap<ClientId> clientByName_;
  PathMap<double> weights_;

  // Columns per row of amounts_: every kind id seen so far has one. Starts with the
  // pre-interned kinds, so a usual cluster never widens the rows.
  size_t kindSlots_ = kinds::kGpus + 1;
  // By NodeId, kindSlots_ columns each: the allocation of the node's whole subtree in milli,
  // as the node's key was last computed from.
  std::vector<int64_t> amounts_;
  // Laid out as amounts_: what the subtree gave back since, not yet taken off amounts_.
  std::vector<int64_t> returned_;
  // The leaves with something in returned_, each once; placeEveryReturn() empties it.
  std::vector<NodeId> returningLeaves_;
  std::vector<int64_t> returnScratch_;  // One row, reused by placeEveryReturn().
  std::vector<Child> sortScratch_;      // For SiblingList::sortAll, one for every list.
  // From this many returning clients of a flat tree (and a quarter of its clients), one sort
  // places them all (placeEveryReturn).
  static constexpr size_t kResortFrom = 8;

  Quantities total_;
  // By KindId < kindSlots_: the total in milli as a double, or 0 when the kind is excluded or
  // has no total.
  std::vector<double> divisor_;
  std::vector<bool> excluded_;
  // The kinds whose divisor is not 0, ascending: a share is one division per kind here.
  std::vector<KindId> fairKinds_;

  bool sharesStale_ = false;
  OrderChange orderChange_ = OrderChange::kAny;
  NodeId movedRootLeaf_ = kRoot;  // With kOneRootClientMoved.
};

}  // namespace harvest
