// How the server writes a response head and a whole response: status line, the caller's
// header fields (checked, so a value cannot smuggle in more), framing and connection fields.
#include "net/response_writer.h"

#include <glog/logging.h>

namespace harvest::http {
namespace detail {

namespace {

void appendField(std::string& out, std::string_view name, std::string_view value) {
  // A CR or LF in a value would let whoever chose it add headers or a whole response.
  if (!isToken(name) || !isFieldValue(value)) {
    LOG(ERROR) << "dropping malformed response header '" << name << "'";
    return;
  }
  out.append(name);
  out.append(": ");
  out.append(value);
  out.append("\r\n");
}

}  // namespace

// The status line and the caller's fields. True if the caller asked for Connection: close.
bool appendResponseHead(std::string& out, int status, const std::string& contentType,
                        const Headers& headers) {
  out.append("HTTP/1.1 ");
  out.append(std::to_string(status));
  out.push_back(' ');
  out.append(reasonPhrase(status));
  out.append("\r\n");
  if (!contentType.empty()) appendField(out, "Content-Type", contentType);
  bool close = false;
  for (const auto& [name, value] : headers) {
    std::string lower = toLower(name);
    if (lower == "connection") {
      close = close || headerHasToken({{lower, value}}, "connection", "close");
      continue;
    }
    if (lower == "content-length" || lower == "transfer-encoding") {
      LOG(WARNING) << "ignoring response header '" << name << "': the server frames bodies";
      continue;
    }
    appendField(out, name, value);
  }
  return close;
}

// A complete response with a Content-Length body.
std::string serializeResponse(const Response& response, bool headRequest, bool close,
                              int versionMinor) {
  std::string out;
  out.reserve(128 + response.body.size());
  close = appendResponseHead(out, response.status, response.contentType, response.headers) || close;
  bool bodyAllowed = response.status != 204 && response.status != 304;
  if (bodyAllowed) appendField(out, "Content-Length", std::to_string(response.body.size()));
  if (close) {
    out.append("Connection: close\r\n");
  } else if (versionMinor == 0) {
    out.append("Connection: keep-alive\r\n");
  }
  out.append("\r\n");
  if (bodyAllowed && !headRequest) out.append(response.body);
  return out;
}

bool wantsClose(const Response& response) {
  for (const auto& [name, value] : response.headers) {
    if (toLower(name) == "connection" &&
        headerHasToken({{"connection", value}}, "connection", "close")) {
      return true;
    }
  }
  return false;
}

}  // namespace detail

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

Response Response::text(int status, std::string body) {
  Response response;
  response.status = status;
  response.contentType = "text/plain; charset=utf-8";
  response.body = std::move(body);
  return response;
}

Response Response::json(int status, std::string body) {
  Response response;
  response.status = status;
  response.contentType = "application/json";
  response.body = std::move(body);
  return response;
}

}  // namespace harvest::http
