// ClientId: a sorter client, a dense id handed out by Sorter::add().
#pragma once

#include <cstdint>

namespace harvest {

using ClientId = uint32_t;

}  // namespace harvest
