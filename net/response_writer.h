// Response serialization for HttpServer (internal to master/http).
#pragma once

#include <string>

#include "net/http_server.h"

namespace harvest::http::detail {

// The status line and the caller's fields. True if the caller asked for Connection: close.
bool appendResponseHead(std::string& out, int status, const std::string& contentType,
                        const Headers& headers);
// A complete response with a Content-Length body (headers only for HEAD).
std::string serializeResponse(const Response& response, bool headRequest, bool close,
                              int versionMinor);
// The response's own fields ask to close the connection.
bool wantsClose(const Response& response);

}  // namespace harvest::http::detail
