// Footprint: what resources physically take on an agent, whatever they are called.
//
// Revocable resources arrive re-keyed as unreserved (Resources::lentAs) but run on the
// owner's reserved resources, so the ledger cannot compare them key by key with the agent's
// total. A Footprint drops everything but the kind: scalars become amounts per kind, while
// ranges and sets keep their values (port 31005 is the same port whoever holds it), re-keyed
// to a plain {kind} key so Resources' own arithmetic applies.
#pragma once

#include "resources/quantities.h"
#include "resources/resources.h"

namespace harvest::agent {

struct Footprint {
  Quantities scalars;  // Scalar entries only, summed per kind.
  Resources shaped;    // Range and set entries, keyed by kind alone.

  static Footprint of(const Resources& resources);

  bool empty() const { return scalars.empty() && shaped.empty(); }
  // Ranges and sets must be disjoint from what is already counted: union would hide a
  // double use, so callers check overlaps() first.
  Footprint& operator+=(const Footprint& other);
  Footprint& operator-=(const Footprint& other);
  friend bool operator==(const Footprint&, const Footprint&) = default;
};

// True when some range value or set item of one kind is in both (scalars are ignored).
bool overlaps(const Resources& a, const Resources& b);

}  // namespace harvest::agent
