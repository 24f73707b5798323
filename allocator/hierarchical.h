// The hierarchical allocator: quota stage, weighted DRF stage, revocable stage.
#pragma once

#include <memory>

#include "allocator/allocator.h"

namespace harvest {

std::unique_ptr<Allocator> makeHierarchicalAllocator();

}  // namespace harvest
