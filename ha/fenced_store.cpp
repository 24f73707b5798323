#include "ha/fenced_store.h"

#include <glog/logging.h>

#include <cstdio>

namespace harvest::ha {
namespace {

struct Manifest {
  long long generation = 0;
  long long chunks = 0;
};

std::optional<Manifest> parseManifest(const std::string& text) {
  Manifest manifest;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lld %lld %c", &manifest.generation, &manifest.chunks, &extra) !=
          2 ||
      manifest.generation < 1 || manifest.chunks < 0) {
    return std::nullopt;
  }
  return manifest;
}

std::string chunkName(long long generation, long long index) {
  return "g" + std::to_string(generation) + "-" + std::to_string(index);
}

}  // namespace

Result<std::optional<std::string>> FencedStore::load() {
  auto manifestNode = session_.get(path_);
  if (manifestNode.code() == StatusCode::kNotFound) return std::optional<std::string>();
  if (!manifestNode.ok()) return manifestNode.status();
  if (manifestNode->data.empty()) return std::optional<std::string>();
  const auto manifest = parseManifest(manifestNode->data);
  if (!manifest) {
    return Status::corruption("the state manifest at " + path_ + " is not '<generation> <chunks>'");
  }
  std::string bytes;
  for (long long index = 0; index < manifest->chunks; ++index) {
    const std::string chunk = path_ + "/" + chunkName(manifest->generation, index);
    auto node = session_.get(chunk);
    if (node.code() == StatusCode::kNotFound) {
      return Status::corruption("state chunk " + chunk + " named by the manifest is missing");
    }
    if (!node.ok()) return node.status();
    bytes += node->data;
  }
  return std::optional<std::string>(std::move(bytes));
}

Status FencedStore::save(const std::string& bytes) {
  if (auto status = session_.createParents(path_); !status.ok()) return status;
  auto manifestNode = session_.get(path_);
  if (!manifestNode.ok()) return manifestNode.status();
  const auto previous = parseManifest(manifestNode->data);
  const long long generation = previous ? previous->generation + 1 : 1;

  long long chunks = 0;
  for (size_t offset = 0; offset < bytes.size(); offset += kChunkBytes, ++chunks) {
    const std::string chunk = path_ + "/" + chunkName(generation, chunks);
    const std::string data = bytes.substr(offset, kChunkBytes);
    auto created = session_.create(chunk, data, NodeKind::kPersistent);
    if (created.code() == StatusCode::kFailedPrecondition) {
      // Left by a deposed writer of the same generation: ours replaces it.
      auto replaced = session_.set(chunk, data);
      if (!replaced.ok()) return replaced.status();
      continue;
    }
    if (!created.ok()) return created.status();
  }
  const std::string manifest = std::to_string(generation) + " " + std::to_string(chunks);
  if (auto status = session_.setFenced(path_, manifest, fence_); !status.ok()) return status;

  // Older generations (and a deposed writer's leftovers) are unreachable now.
  auto children = session_.children(path_);
  if (!children.ok()) return {};  // Cleared by the next save.
  const std::string current = "g" + std::to_string(generation) + "-";
  for (const auto& child : *children) {
    if (child.starts_with(current)) continue;
    if (auto status = session_.remove(path_ + "/" + child); !status.ok()) {
      LOG(WARNING) << "Could not delete old state chunk: " << status.message();
    }
  }
  return {};
}

}  // namespace harvest::ha
