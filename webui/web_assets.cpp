#include "webui/web_assets.h"

namespace harvest::webui {

const WebAsset* findWebAsset(std::string_view name) {
  for (size_t i = 0; i < kEmbeddedCount; ++i) {
    if (kEmbedded[i].name == name) return &kEmbedded[i];
  }
  return nullptr;
}

}  // namespace harvest::webui
