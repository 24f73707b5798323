#include "devtools_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/json_reader.h"
#include "headless_browser.h"

namespace harvest::webui_test {
namespace {

constexpr int kMaxDepth = 64;
using Clock = std::chrono::steady_clock;

// The value at the reader's position, read to its end; its text into *out when it is the
// member `path` names (path empty: this value).
bool findIn(JsonReader& json, const std::string_view* path, size_t left, int depth,
            std::optional<std::string>* out) {
  using Next = JsonReader::Next;
  const char c = json.peek();
  if (left == 0) {
    if (c == '"') {
      std::string text;
      if (!json.string(&text)) return false;
      *out = std::move(text);
      return true;
    }
    const size_t start = json.offset();
    if (!json.skipValue(depth)) return false;
    *out = std::string(json.text().substr(start, json.offset() - start));
    return true;
  }
  if (c != '{') return json.skipValue(depth);
  Next next = json.openObject(depth + 1);
  while (next == Next::kItem) {
    std::string name;
    if (!json.memberName(&name)) return false;
    json.skipSpace();
    const bool match = name == path[0];
    if (!(match ? findIn(json, path + 1, left - 1, depth + 1, out) : json.skipValue(depth + 1))) {
      return false;
    }
    next = json.afterMember();
  }
  return next == Next::kEnd;
}

std::string jsonQuoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::optional<std::string> jsonValueAt(std::string_view json,
                                       std::initializer_list<std::string_view> path) {
  JsonReader reader(json, kMaxDepth);
  reader.skipSpace();
  std::optional<std::string> out;
  if (!findIn(reader, path.begin(), path.size(), 0, &out)) return std::nullopt;
  return out;
}

std::unique_ptr<DevToolsSession> DevToolsSession::open(const std::string& chromium,
                                                       const std::string& url, std::string* error) {
  std::unique_ptr<DevToolsSession> session(new DevToolsSession());
  session->profile_ =
      std::filesystem::temp_directory_path() /
      ("harvest-devtools-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(session->profile_);
  int commands[2], answers[2];
  if (::pipe2(commands, O_CLOEXEC) != 0 || ::pipe2(answers, O_CLOEXEC) != 0) {
    *error = "pipe failed";
    return nullptr;
  }
  const int devNull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const pid_t pid = startChromium(
      chromium, session->profile_,
      {"--hide-scrollbars", "--window-size=1200,800", "--remote-debugging-pipe", "about:blank"},
      {{3, commands[0]}, {4, answers[1]}, {1, devNull}, {2, devNull}});
  ::close(devNull);
  session->pid_ = pid;
  ::close(commands[0]);
  ::close(answers[1]);
  session->toBrowser_ = commands[1];
  session->fromBrowser_ = answers[0];

  const Duration timeout = Duration::seconds(20);
  std::optional<std::string> created =
      session->command("Target.createTarget", "{\"url\":" + jsonQuoted(url) + "}", true, timeout);
  std::optional<std::string> target =
      created ? jsonValueAt(*created, {"result", "targetId"}) : std::nullopt;
  if (!target) {
    *error = "the browser created no page";
    return nullptr;
  }
  std::optional<std::string> attached = session->command(
      "Target.attachToTarget", "{\"targetId\":" + jsonQuoted(*target) + ",\"flatten\":true}", true,
      timeout);
  std::optional<std::string> id =
      attached ? jsonValueAt(*attached, {"result", "sessionId"}) : std::nullopt;
  if (!id) {
    *error = "could not attach to the page";
    return nullptr;
  }
  session->session_ = *id;
  if (!session->command("Runtime.enable", "{}", false, timeout)) {
    *error = "Runtime.enable got no answer";
    return nullptr;
  }
  return session;
}

DevToolsSession::~DevToolsSession() {
  if (toBrowser_ >= 0) ::close(toBrowser_);
  if (fromBrowser_ >= 0) ::close(fromBrowser_);
  if (pid_ > 0) {
    // The browser's helpers (renderer, GPU, zygote) are in its group: none outlives the test.
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(profile_, ignored);
}

std::optional<std::string> DevToolsSession::command(std::string_view method,
                                                    std::string_view params, bool browserLevel,
                                                    Duration timeout) {
  const int64_t id = nextId_++;
  std::string message = "{\"id\":" + std::to_string(id) + ",\"method\":" + jsonQuoted(method) +
                        ",\"params\":" + std::string(params);
  if (!browserLevel) message += ",\"sessionId\":" + jsonQuoted(session_);
  message += "}";
  message.push_back('\0');
  for (size_t sent = 0; sent < message.size();) {
    const ssize_t n = ::write(toBrowser_, message.data() + sent, message.size() - sent);
    if (n <= 0) return std::nullopt;
    sent += static_cast<size_t>(n);
  }
  const std::string wanted = std::to_string(id);
  const Clock::time_point deadline = Clock::now() + timeout.chrono();
  while (true) {
    for (size_t end = pending_.find('\0'); end != std::string::npos; end = pending_.find('\0')) {
      std::string reply = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      if (jsonValueAt(reply, {"id"}) == wanted) return reply;
      record(reply);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd ready{fromBrowser_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[64 * 1024];
    const ssize_t n = ::read(fromBrowser_, buffer, sizeof buffer);
    if (n <= 0) return std::nullopt;
    pending_.append(buffer, static_cast<size_t>(n));
  }
}

void DevToolsSession::record(const std::string& event) {
  const std::optional<std::string> method = jsonValueAt(event, {"method"});
  if (method == "Runtime.exceptionThrown") {
    errors_ +=
        "uncaught: " + jsonValueAt(event, {"params", "exceptionDetails", "text"}).value_or("?") +
        "\n";
  } else if (method == "Runtime.consoleAPICalled" &&
             jsonValueAt(event, {"params", "type"}) == "error") {
    errors_ += "console error\n";
  }
}

bool DevToolsSession::navigate(const std::string& url) {
  return command("Page.navigate", "{\"url\":" + jsonQuoted(url) + "}", false, Duration::seconds(20))
      .has_value();
}

std::optional<std::string> DevToolsSession::evaluate(std::string_view expression,
                                                     Duration timeout) {
  const std::string params =
      "{\"expression\":" + jsonQuoted("String(" + std::string(expression) + ")") +
      ",\"returnByValue\":true}";
  std::optional<std::string> reply = command("Runtime.evaluate", params, false, timeout);
  if (!reply || jsonValueAt(*reply, {"result", "exceptionDetails"})) return std::nullopt;
  return jsonValueAt(*reply, {"result", "result", "value"});
}

std::optional<Duration> DevToolsSession::waitUntil(std::string_view expression, Duration timeout) {
  const Clock::time_point start = Clock::now(), deadline = start + timeout.chrono();
  while (Clock::now() < deadline) {
    if (evaluate(expression) == "true") {
      return Duration::nanoseconds(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

}  // namespace harvest::webui_test
