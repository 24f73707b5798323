// The web UI's files as the master serves them: compiled into the binary from webui/, so the
// UI works offline and always matches the master that serves it.
#pragma once

#include <cstddef>
#include <string_view>

namespace harvest::webui {

struct WebAsset {
  std::string_view name;  // "index.html", "app.js": the file's name in webui/.
  std::string_view contentType;
  std::string_view body;
};

// The file named `name`, or null.
const WebAsset* findWebAsset(std::string_view name);

// Every embedded file (web_assets_data.cpp, generated at build time).
extern const WebAsset kEmbedded[];
extern const size_t kEmbeddedCount;

}  // namespace harvest::webui
