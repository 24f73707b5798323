// Base64 (RFC 4648 section 4), for HTTP Basic credentials and protobuf bytes in JSON.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace harvest {

// Standard alphabet, padded.
std::string base64Encode(std::string_view bytes);
// Accepts the standard alphabet with or without padding; refuses anything else (stray
// characters, misplaced '=', non-zero unused bits) rather than guessing.
Result<std::string> base64Decode(std::string_view text);

}  // namespace harvest
