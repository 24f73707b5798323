// A live headless Chromium driven over the DevTools protocol, for what one page load cannot
// show: a page that keeps running while the cluster changes under it, and how long it takes
// to render. The protocol runs over a pipe (--remote-debugging-pipe: JSON messages ended by
// a NUL byte, the browser reading fd 3 and writing fd 4), so no port is opened. The browser is
// its own process group, stopped by that group's id when the session ends.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/time.h"

namespace harvest::webui_test {

// The text of the member at `path` (object members, outermost first) of a JSON object: a
// string decoded, a number or literal as written; nullopt when absent or not valid JSON.
std::optional<std::string> jsonValueAt(std::string_view json,
                                       std::initializer_list<std::string_view> path);

class DevToolsSession {
 public:
  // A browser with one page at `url`, or nullptr (with the reason logged by the test).
  static std::unique_ptr<DevToolsSession> open(const std::string& chromium, const std::string& url,
                                               std::string* error);
  ~DevToolsSession();
  DevToolsSession(const DevToolsSession&) = delete;
  DevToolsSession& operator=(const DevToolsSession&) = delete;

  // Loads `url` in the page (as typing it into a running browser); false without an answer.
  bool navigate(const std::string& url);

  // `expression` evaluated in the page, its value as text (String(value)); nullopt when the
  // expression threw or the browser did not answer within `timeout`.
  std::optional<std::string> evaluate(std::string_view expression,
                                      Duration timeout = Duration::seconds(5));

  // Evaluates `expression` every 20 ms until it is "true"; the time that took, or nullopt
  // after `timeout`.
  std::optional<Duration> waitUntil(std::string_view expression, Duration timeout);

  // Console errors and uncaught exceptions the page reported so far, one per line.
  const std::string& errors() const { return errors_; }

 private:
  DevToolsSession() = default;
  // Sends a command (to the page's session unless `browserLevel`) and waits for its answer;
  // events read meanwhile are recorded.
  std::optional<std::string> command(std::string_view method, std::string_view params,
                                     bool browserLevel, Duration timeout);
  void record(const std::string& event);

  pid_t pid_ = -1;
  int toBrowser_ = -1;
  int fromBrowser_ = -1;
  std::filesystem::path profile_;
  std::string pending_;  // Read, not yet split into messages.
  std::string session_;  // The page's session id.
  int64_t nextId_ = 1;
  std::string errors_;
};

}  // namespace harvest::webui_test
