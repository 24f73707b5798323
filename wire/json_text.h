// Base64 as Mesos reads it in the scheduler API's JSON (writing uses harvest::base64Encode, the
// canonical padded form). The JSON syntax itself is common/json_reader.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace harvest::wire::text {

// Lenient, as Mesos decodes: see the definition.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace harvest::wire::text
