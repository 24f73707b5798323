// Volumes: the disk identity of persistent volumes (CREATE/DESTROY), interned to dense ids.
//
// Two disk resources are interchangeable only when their volume ids are equal; plain disk has
// volume 0. The registry keeps the serialized DiskInfo so it can be written back unchanged.
#pragma once

#include <cstdint>
#include <string>

namespace harvest {

using VolumeId = uint32_t;
inline constexpr VolumeId kNoVolume = 0;

namespace volumes {
// `diskInfo` is a serialized harvest.v1.Resource.DiskInfo with a persistence id.
VolumeId intern(const std::string& diskInfo);
const std::string& get(VolumeId id);
}  // namespace volumes

}  // namespace harvest
