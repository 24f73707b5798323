#include "sorters/sorter_tree.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

namespace harvest {

SorterTree::SorterTree(SiblingOrder order)
    : order_(order),
      amounts_(kindSlots_, 0),
      returned_(kindSlots_, 0),
      divisor_(kindSlots_, 0.0),
      excluded_(kindSlots_, false) {
  nodes_.emplace_back();
  nodes_[kRoot].inUse = true;
  activeLeaves_.push_back(0);
}

// ---------------------------------------------------------------------------------------------
// Structure.

SorterTree::NodeId SorterTree::newNode(std::string_view path, NodeId parent, ClientId client) {
  NodeId id;
  if (freeNodes_.empty()) {
    id = static_cast<NodeId>(nodes_.size());
    nodes_.emplace_back();
    activeLeaves_.push_back(0);
    amounts_.resize(amounts_.size() + kindSlots_, 0);
    returned_.resize(returned_.size() + kindSlots_, 0);
  } else {
    id = freeNodes_.back();
    freeNodes_.pop_back();
    // A freed node had nothing given back: its tree was brought up to date before the removal.
    std::fill_n(amountsOf(id), kindSlots_, 0);
  }
  Node& node = nodes_[id];
  node.path.assign(path);
  node.allocations = 0;
  node.share = 0;
  auto weight = weights_.find(path);
  node.weight = weight == weights_.end() ? 1.0 : weight->second;
  node.parent = parent;
  node.client = client;
  node.inUse = true;
  node.virtualLeaf = false;
  node.returning = false;
  node.rank = 0;
  node.slot = 0;
  node.children.clear();
  node.byPath.clear();
  activeLeaves_[id] = 0;
  if (client == kNoClient) {
    ++internalNodes_;
    // A move noted while the tree was flat can no longer be patched into sort()'s last order.
    orderChange_ = OrderChange::kAny;
  }
  return id;
}

void SorterTree::freeNode(NodeId id) {
  Node& node = nodes_[id];
  if (node.client == kNoClient) --internalNodes_;
  node.inUse = false;
  node.parent = kNoNode;
  node.client = kNoClient;
  node.children.clear();
  node.byPath.clear();
  freeNodes_.push_back(id);
}

std::string_view SorterTree::siblingLabel(NodeId id) const {
  const Node& node = nodes_[id];
  if (node.virtualLeaf) return ".";
  const std::string_view path = node.path;
  return path.substr(path.rfind('/') + 1);
}

// Siblings share their parent's path, so ordering them by last label is ordering them by path.
void SorterTree::rankAmongSiblings(NodeId id) {
  Node& parent = nodes_[nodes_[id].parent];
  std::vector<NodeId>& byPath = parent.byPath;
  const std::string_view label = siblingLabel(id);
  const auto at = std::lower_bound(
      byPath.begin(), byPath.end(), label,
      [this](NodeId sibling, std::string_view other) { return siblingLabel(sibling) < other; });
  if (at == byPath.end()) {
    // Clients added in name order, the common case, take the next rank and move nobody.
    nodes_[id].rank = byPath.empty() ? 0 : nodes_[byPath.back()].rank + 1;
    byPath.push_back(id);
    return;
  }
  byPath.insert(at, id);
  for (uint32_t position = 0; position < byPath.size(); ++position) {
    nodes_[byPath[position]].rank = position;
  }
  // Every sibling keeps its relative order, so the child array stays sorted.
  parent.children.forEachMutable([this](Child& child) { child.rank = nodes_[child.node].rank; });
}

void SorterTree::takeRankOf(NodeId id, NodeId replacement) {
  std::vector<NodeId>& byPath = nodes_[nodes_[id].parent].byPath;
  *std::find(byPath.begin(), byPath.end(), id) = replacement;
  nodes_[replacement].rank = nodes_[id].rank;
}

void SorterTree::attach(NodeId id) {
  refreshOnlyChild(nodes_[id].parent);
  rankAmongSiblings(id);
  Node& node = nodes_[id];
  const Child entry{node.share, node.allocations, node.rank, id, node.client, 0};
  SiblingList<Child>& siblings = nodes_[node.parent].children;
  if (order_ == SiblingOrder::kByShare) {
    // Also while shares are stale: the entries are still in the order of the keys they hold,
    // and staying so lets the re-sort find them in order when the new shares keep it (as
    // when clients registered before any agent all still hold nothing), instead of sorting
    // them all over again.
    node.slot =
        siblings.insertSorted(entry, [](const Child& a, const Child& b) { return keyLess(a, b); });
  } else {
    node.slot = siblings.append(entry);
  }
}

// Linear: structure changes are rare next to allocation changes, and erasing from the array
// is linear anyway. It also works while the order is stale.
SorterTree::Child& SorterTree::entryOf(NodeId id) {
  Child* entry = nodes_[nodes_[id].parent].children.findIf(
      [id](const Child& child) { return child.node == id; });
  CHECK(entry != nullptr) << "sorter tree node " << id << " missing from its parent";
  return *entry;
}

void SorterTree::detach(NodeId id) {
  Node& parent = nodes_[nodes_[id].parent];
  parent.children.eraseIf([id](const Child& child) { return child.node == id; });
  parent.byPath.erase(std::find(parent.byPath.begin(), parent.byPath.end(), id));
}

SorterTree::NodeId SorterTree::internalNodeAt(std::string_view path, NodeId parent) {
  auto it = nodeByPath_.find(path);
  if (it == nodeByPath_.end()) {
    const NodeId id = newNode(path, parent, kNoClient);
    attach(id);
    nodeByPath_.emplace(std::string(path), id);
    return id;
  }
  const NodeId existing = it->second;
  if (nodes_[existing].client == kNoClient) return existing;

  // The client named `path` now has nested clients. A new internal node takes its place (with
  // the same key, so the parent's order holds) and the client moves under it.
  const NodeId internal = newNode(path, parent, kNoClient);
  Node& leaf = nodes_[existing];
  Node& node = nodes_[internal];
  std::copy_n(amountsOf(existing), kindSlots_, amountsOf(internal));
  node.allocations = leaf.allocations;
  node.share = leaf.share;
  activeLeaves_[internal] = activeLeaves_[existing];
  Child& entry = entryOf(existing);
  entry.node = internal;
  entry.client = kNoClient;
  node.slot = entry.slot;
  takeRankOf(existing, internal);
  leaf.parent = internal;
  leaf.rank = 0;
  node.byPath.push_back(existing);
  leaf.slot = node.children.append(
      Child{leaf.share, leaf.allocations, leaf.rank, existing, leaf.client, 0});
  node.children.setActive(leaf.slot, activeLeaves_[existing] > 0);
  makeVirtualLeaf(existing);
  it->second = internal;
  return internal;
}

void SorterTree::collapseIfOnlyVirtualLeaf(NodeId id) {
  if (id == kRoot) return;
  const Node& node = nodes_[id];
  if (node.children.size() != 1) return;
  const Child only = node.children.front();
  Node& leaf = nodes_[only.node];
  if (only.client == kNoClient || leaf.path != node.path) return;

  // The leaf's allocation is the whole subtree's and it takes the path's weight back, so the
  // keys match and the entry stays put.
  takeRankOf(id, only.node);
  leaf.parent = node.parent;
  leaf.share = node.share;
  leaf.allocations = node.allocations;
  leaf.weight = node.weight;
  leaf.virtualLeaf = false;
  Child& entry = entryOf(id);
  entry.node = only.node;
  entry.client = only.client;
  leaf.slot = entry.slot;
  nodeByPath_.find(node.path)->second = only.node;
  freeNode(id);
}

ClientId SorterTree::add(std::string_view name) {
  CHECK(!name.empty()) << "sorter client names must not be empty";
  CHECK(!clientByName_.contains(name)) << "sorter client '" << name << "' already exists";
  // A new internal node takes over a leaf's amounts, and a new sibling the keys of the others.
  placeReturns();

  NodeId parent = kRoot;
  for (size_t slash = name.find('/'); slash != std::string_view::npos;
       slash = name.find('/', slash + 1)) {
    parent = internalNodeAt(name.substr(0, slash), parent);
  }

  ClientId client;
  if (freeClients_.empty()) {
    client = static_cast<ClientId>(leafOfClient_.size());
    leafOfClient_.push_back(kNoNode);
  } else {
    client = freeClients_.back();
    freeClients_.pop_back();
  }

  NodeId leaf;
  auto existing = nodeByPath_.find(name);
  if (existing != nodeByPath_.end()) {
    // Nested clients exist already: this one is a virtual leaf of their parent.
    const NodeId internal = existing->second;
    leaf = newNode(name, internal, client);
    nodes_[leaf].virtualLeaf = true;
    nodes_[leaf].weight = 1.0;
  } else {
    leaf = newNode(name, parent, client);
    nodeByPath_.emplace(std::string(name), leaf);
  }
  attach(leaf);
  leafOfClient_[client] = leaf;
  clientByName_.emplace(std::string(name), client);
  ++clientCount_;
  return client;
}

void SorterTree::remove(ClientId client) {
  const NodeId leaf = leafOf(client);
  placeReturns();  // Its amounts leave its ancestors' whole.
  if (activeLeaves_[leaf] > 0) propagateActive(leaf, -1);

  const NodeId parent = nodes_[leaf].parent;
  // The leaf's row is not among those changed, so it stays put while they are.
  const int64_t* held = amountsOf(leaf);
  const uint64_t heldAllocations = nodes_[leaf].allocations;
  changeAllocation(parent, [&](int64_t* amounts, uint64_t& allocations) {
    for (size_t kind = 0; kind < kindSlots_; ++kind) amounts[kind] -= held[kind];
    allocations -= heldAllocations;
  });
  detach(leaf);

  const std::string& path = nodes_[leaf].path;
  auto byPath = nodeByPath_.find(path);
  if (byPath != nodeByPath_.end() && byPath->second == leaf) nodeByPath_.erase(byPath);
  clientByName_.erase(clientByName_.find(path));
  freeNode(leaf);
  leafOfClient_[client] = kNoNode;
  freeClients_.push_back(client);
  --clientCount_;

  NodeId node = parent;
  while (node != kRoot && nodes_[node].children.empty()) {
    const NodeId up = nodes_[node].parent;
    detach(node);
    nodeByPath_.erase(nodeByPath_.find(nodes_[node].path));
    freeNode(node);
    node = up;
  }
  collapseIfOnlyVirtualLeaf(node);
}

std::optional<ClientId> SorterTree::find(std::string_view name) const {
  auto it = clientByName_.find(name);
  if (it == clientByName_.end()) return std::nullopt;
  return it->second;
}

const std::string& SorterTree::name(ClientId client) const {
  return nodes_[leafOf(client)].path;
}

// ---------------------------------------------------------------------------------------------
// Activation.

void SorterTree::propagateActive(NodeId leaf, int delta) {
  for (NodeId node = leaf; node != kRoot; node = nodes_[node].parent) {
    const bool wasActive = activeLeaves_[node] > 0;
    activeLeaves_[node] += delta;
    // The parent's list flags the children that hold active clients, for the walks to visit.
    if (wasActive != (activeLeaves_[node] > 0)) {
      nodes_[nodes_[node].parent].children.setActive(nodes_[node].slot, !wasActive);
    }
  }
  activeLeaves_[kRoot] += delta;
  orderChange_ = OrderChange::kAny;
}

void SorterTree::activate(ClientId client) {
  const NodeId leaf = leafOf(client);
  if (activeLeaves_[leaf] == 0) propagateActive(leaf, +1);
}

void SorterTree::deactivate(ClientId client) {
  const NodeId leaf = leafOf(client);
  if (activeLeaves_[leaf] > 0) propagateActive(leaf, -1);
}

bool SorterTree::isActive(ClientId client) const {
  return activeLeaves_[leafOf(client)] > 0;
}

// ---------------------------------------------------------------------------------------------
// Allocations and keys.

template <typename Change>
void SorterTree::changeAllocation(NodeId from, const Change& change) {
  for (NodeId id = from; id != kRoot; id = nodes_[id].parent) {
    Node& node = nodes_[id];
    const double oldShare = node.share;
    const uint64_t oldAllocations = node.allocations;
    change(amountsOf(id), node.allocations);
    if (order_ == SiblingOrder::kByShare) refreshKey(id, oldShare, oldAllocations);
  }
}

void SorterTree::refreshKey(NodeId id, double oldShare, uint64_t oldAllocations) {
  Node& node = nodes_[id];
  SiblingList<Child>& siblings = nodes_[node.parent].children;
  // An only child's key orders nothing (the role sorter of a single role, say): it is left
  // stale until a sibling joins, which refreshOnlyChild() handles.
  if (siblings.size() == 1) return;
  node.share = shareOf(id);
  if (sharesStale_) return;

  const auto less = [](const Child& a, const Child& b) { return keyLess(a, b); };
  const Child old{oldShare, oldAllocations, node.rank, id, node.client, node.slot};
  const Child moved{node.share, node.allocations, node.rank, id, node.client, node.slot};
  const bool repositioned = siblings.reposition(old, moved, less);
  // A subtree without active clients contributes nothing to sort(), wherever it sits.
  if (repositioned && activeLeaves_[id] > 0) noteMoved(id);
}

// A sort() after every offer, as the allocator's role loop makes, then sees one client of a
// flat tree moved, which it can patch into its order instead of re-walking the tree.
void SorterTree::noteMoved(NodeId id) {
  if (orderChange_ == OrderChange::kNone && internalNodes_ == 0) {
    orderChange_ = OrderChange::kOneRootClientMoved;
    movedRootLeaf_ = id;
  } else if (orderChange_ != OrderChange::kOneRootClientMoved || movedRootLeaf_ != id) {
    orderChange_ = OrderChange::kAny;
  }
}

void SorterTree::refreshOnlyChild(NodeId parent) {
  SiblingList<Child>& siblings = nodes_[parent].children;
  if (order_ != SiblingOrder::kByShare || siblings.size() != 1) return;
  siblings.forEachMutable([this](Child& only) {
    Node& node = nodes_[only.node];
    node.share = shareOf(only.node);
    only.share = node.share;
    only.allocations = node.allocations;
  });
}

void SorterTree::allocated(ClientId client, const Quantities& quantities) {
  const NodeId leaf = leafOf(client);
  placeReturns();
  reserveKindSlots(quantities);
  changeAllocation(leaf, [&](int64_t* amounts, uint64_t& allocations) {
    for (const auto& [kind, amount] : quantities) amounts[kind] += amount.milli();
    ++allocations;
  });
}

void SorterTree::unallocated(ClientId client, const Quantities& quantities) {
  const NodeId leaf = leafOf(client);
  CHECK(holds(leaf, quantities)) << "sorter client '" << nodes_[leaf].path << "' holds "
                                 << allocationOf(leaf).toString() << ", cannot unallocate "
                                 << quantities.toString();
  // Without keys (the random sorter) there is nothing to place: taken off at once.
  if (order_ == SiblingOrder::kInsertion) {
    changeAllocation(leaf, [&](int64_t* amounts, uint64_t&) {
      for (const auto& [kind, amount] : quantities) amounts[kind] -= amount.milli();
    });
    return;
  }
  for (NodeId id = leaf; id != kRoot; id = nodes_[id].parent) {
    int64_t* returned = returnedOf(id);
    for (const auto& [kind, amount] : quantities) returned[kind] += amount.milli();
  }
  if (!nodes_[leaf].returning) {
    nodes_[leaf].returning = true;
    returningLeaves_.push_back(leaf);
  }
}

void SorterTree::placeEveryReturn() {
  // A round of declines under one flat tree (the framework sorter of a role, the role sorter
  // without nesting) often returns a good part of the clients: their keys are then brought up
  // to date in place and the list sorted once, instead of moving each client on its own.
  SiblingList<Child>& flat = nodes_[kRoot].children;
  if (order_ == SiblingOrder::kByShare && internalNodes_ == 0 && flat.size() > 1 &&
      returningLeaves_.size() >= kResortFrom && returningLeaves_.size() * 4 >= flat.size()) {
    for (const NodeId leaf : returningLeaves_) {
      nodes_[leaf].returning = false;
      int64_t* amounts = amountsOf(leaf);
      int64_t* returned = returnedOf(leaf);
      for (size_t kind = 0; kind < kindSlots_; ++kind) {
        amounts[kind] -= returned[kind];
        returned[kind] = 0;
      }
      nodes_[leaf].share = shareOf(leaf);
    }
    returningLeaves_.clear();
    flat.forEachMutable([this](Child& child) { child.share = nodes_[child.node].share; });
    flat.sortAll([](const Child& a, const Child& b) { return keyLess(a, b); }, sortScratch_);
    orderChange_ = OrderChange::kAny;
    return;
  }
  returnScratch_.resize(kindSlots_);
  int64_t* const given = returnScratch_.data();
  for (const NodeId leaf : returningLeaves_) {
    nodes_[leaf].returning = false;
    std::copy_n(returnedOf(leaf), kindSlots_, given);
    // Taken off returned_ first: the keys are made of amounts_ alone either way.
    for (NodeId id = leaf; id != kRoot; id = nodes_[id].parent) {
      int64_t* returned = returnedOf(id);
      for (size_t kind = 0; kind < kindSlots_; ++kind) returned[kind] -= given[kind];
    }
    changeAllocation(leaf, [&](int64_t* amounts, uint64_t&) {
      for (size_t kind = 0; kind < kindSlots_; ++kind) amounts[kind] -= given[kind];
    });
  }
  returningLeaves_.clear();
}

void SorterTree::update(ClientId client, const Quantities& from, const Quantities& to) {
  const NodeId leaf = leafOf(client);
  placeReturns();
  CHECK(holds(leaf, from)) << "sorter client '" << nodes_[leaf].path << "' holds "
                           << allocationOf(leaf).toString() << ", cannot update "
                           << from.toString();
  reserveKindSlots(to);
  changeAllocation(leaf, [&](int64_t* amounts, uint64_t&) {
    for (const auto& [kind, amount] : from) amounts[kind] -= amount.milli();
    for (const auto& [kind, amount] : to) amounts[kind] += amount.milli();
  });
}

bool SorterTree::holds(NodeId node, const Quantities& quantities) const {
  const int64_t* amounts = amountsOf(node);
  const int64_t* returned = returnedOf(node);
  for (const auto& [kind, amount] : quantities) {
    if (kind >= kindSlots_ ? amount.milli() > 0 : amounts[kind] - returned[kind] < amount.milli()) {
      return false;
    }
  }
  return true;
}

Quantities SorterTree::allocationOf(NodeId node) const {
  const int64_t* amounts = amountsOf(node);
  const int64_t* returned = returnedOf(node);
  Quantities allocation;
  for (size_t kind = 0; kind < kindSlots_; ++kind) {
    const int64_t held = amounts[kind] - returned[kind];
    if (held > 0) allocation.addInKindOrder(static_cast<KindId>(kind), Scalar::fromMilli(held));
  }
  return allocation;
}

Quantities SorterTree::allocation(ClientId client) const {
  return allocationOf(leafOf(client));
}

double SorterTree::shareOfRow(NodeId node, const int64_t* returned) const {
  const int64_t* amounts = amountsOf(node);
  double dominant = 0;
  for (const KindId kind : fairKinds_) {
    const int64_t held = amounts[kind] - (returned != nullptr ? returned[kind] : 0);
    // Skipping what is not held spares a division per kind for the many clients that hold
    // nothing, which a full re-sort computes the share of too.
    if (held == 0) continue;
    dominant = std::max(dominant, static_cast<double>(held) / divisor_[kind]);
  }
  return dominant / nodes_[node].weight;
}

void SorterTree::growKindSlots(size_t slots) {
  std::vector<int64_t> wider(nodes_.size() * slots, 0);
  std::vector<int64_t> widerReturned(nodes_.size() * slots, 0);
  for (size_t node = 0; node < nodes_.size(); ++node) {
    std::copy_n(amountsOf(static_cast<NodeId>(node)), kindSlots_, wider.data() + node * slots);
    std::copy_n(returnedOf(static_cast<NodeId>(node)), kindSlots_,
                widerReturned.data() + node * slots);
  }
  amounts_ = std::move(wider);
  returned_ = std::move(widerReturned);
  kindSlots_ = slots;
  divisor_.resize(slots, 0.0);
  excluded_.resize(slots, false);
}

void SorterTree::makeVirtualLeaf(NodeId id) {
  Node& node = nodes_[id];
  node.virtualLeaf = true;
  node.weight = 1.0;
  const double oldShare = node.share;
  if (order_ == SiblingOrder::kByShare) refreshKey(id, oldShare, node.allocations);
}

double SorterTree::share(ClientId client) const {
  return currentShareOf(leafOf(client));
}

double SorterTree::pathShare(std::string_view path) const {
  auto it = nodeByPath_.find(path);
  return it == nodeByPath_.end() ? 0.0 : currentShareOf(it->second);
}

// ---------------------------------------------------------------------------------------------
// Changes that move every share.

void SorterTree::setDivisor(KindId kind) {
  divisor_[kind] = excluded_[kind] ? 0.0 : static_cast<double>(total_.get(kind).milli());
  fairKinds_.clear();
  for (size_t fair = 0; fair < kindSlots_; ++fair) {
    if (divisor_[fair] > 0) fairKinds_.push_back(static_cast<KindId>(fair));
  }
}

void SorterTree::addTotal(const Quantities& quantities) {
  reserveKindSlots(quantities);
  total_ += quantities;
  for (const auto& entry : quantities) setDivisor(entry.first);
  sharesStale_ = true;
}

void SorterTree::removeTotal(const Quantities& quantities) {
  reserveKindSlots(quantities);
  total_ -= quantities;
  for (const auto& entry : quantities) setDivisor(entry.first);
  sharesStale_ = true;
}

void SorterTree::excludeKind(KindId kind) {
  if (kind >= kindSlots_) growKindSlots(kind + size_t{1});
  excluded_[kind] = true;
  setDivisor(kind);
  sharesStale_ = true;
}

void SorterTree::updateWeight(std::string_view path, double weight) {
  CHECK(std::isfinite(weight) && weight > 0) << "weight of '" << path << "' must be finite and > 0";
  weights_.insert_or_assign(std::string(path), weight);
  // A virtual leaf is not the node at its path and keeps the default weight.
  auto it = nodeByPath_.find(path);
  if (it != nodeByPath_.end()) nodes_[it->second].weight = weight;
  sharesStale_ = true;
}

void SorterTree::resortSiblings() {
  sharesStale_ = false;
  orderChange_ = OrderChange::kAny;
  for (NodeId id = kRoot + 1; id < nodes_.size(); ++id) {
    if (nodes_[id].inUse) nodes_[id].share = shareOf(id);
  }
  const auto less = [](const Child& a, const Child& b) { return keyLess(a, b); };
  for (Node& node : nodes_) {
    if (!node.inUse || node.children.empty()) continue;
    node.children.forEachMutable([this](Child& child) {
      child.share = nodes_[child.node].share;
      child.allocations = nodes_[child.node].allocations;
    });
    // A new total often scales every share alike and leaves the order as it was.
    node.children.sortAll(less, sortScratch_);
  }
}

}  // namespace harvest
