#include "headless_browser.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace harvest::webui_test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<std::string> findChromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(path, X_OK) == 0) return std::string(path);
  }
  return std::nullopt;
}

pid_t startChromium(const std::string& chromium, const std::filesystem::path& profile,
                    const std::vector<std::string>& extra,
                    const std::vector<std::pair<int, int>>& descriptors) {
  // Root needs --no-sandbox; a private profile keeps runs apart.
  std::vector<std::string> args = {chromium,         "--headless",
                                   "--no-sandbox",   "--disable-gpu",
                                   "--no-first-run", "--user-data-dir=" + profile.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    // Each source moved above the targets first, so that one dup2 cannot overwrite another's
    // source; dup2 clears close-on-exec on the copies the browser keeps.
    std::vector<std::pair<int, int>> moved;
    for (const auto& [target, source] : descriptors) {
      moved.emplace_back(target, ::fcntl(source, F_DUPFD, 10));
    }
    for (const auto& [target, source] : moved) ::dup2(source, target);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // Also from here, so the group exists whichever runs first.
  return pid;
}

PageRun loadPage(const std::string& chromium, const std::string& url, int scriptMillis,
                 const std::string& screenshotPath, int width, int height) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("harvest-webui-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out").string(), log = (dir / "log").string();
  // --enable-logging puts the page's console messages in the log.
  std::vector<std::string> args = {"--enable-logging=stderr", "--v=0", "--hide-scrollbars",
                                   "--virtual-time-budget=" + std::to_string(scriptMillis)};
  if (screenshotPath.empty()) {
    args.push_back("--dump-dom");
  } else {
    args.push_back("--window-size=" + std::to_string(width) + "," + std::to_string(height));
    args.push_back("--screenshot=" + screenshotPath);
  }
  args.push_back(url);
  const int stdoutFd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int stderrFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = startChromium(chromium, dir / "profile", args, {{1, stdoutFd}, {2, stderrFd}});
  ::close(stdoutFd);
  ::close(stderrFd);
  PageRun run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      run.finished = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The browser's helpers (renderer, GPU, zygote) are in its group: none outlives the run.
  ::kill(-pid, SIGKILL);
  if (!run.finished) ::waitpid(pid, &status, 0);
  run.dom = readFile(out);
  run.log = readFile(log);
  std::filesystem::remove_all(dir);
  return run;
}

}  // namespace harvest::webui_test
