// Headless Chromium for the web UI's tests: loads a page, lets its scripts run, and hands back
// the DOM it ended with (or a screenshot) and what it logged. Each run is its own process
// group, stopped by that group's id once done or past its deadline: nothing of it outlives the
// call.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harvest::webui_test {

// The chromium binary, or nullopt when none is installed (the test command installs it).
std::optional<std::string> findChromium();

struct PageRun {
  bool finished = false;  // Exited by itself before the deadline.
  std::string dom;        // With dumpDom.
  std::string log;        // What the browser logged (console messages included).
};

// Starts `chromium` headless with a private `profile`, the flags every run needs and `extra`,
// in a process group of its own (its id is the pid returned), each (target, source) of
// `descriptors` in place of the child's descriptor `target`.
pid_t startChromium(const std::string& chromium, const std::filesystem::path& profile,
                    const std::vector<std::string>& extra,
                    const std::vector<std::pair<int, int>>& descriptors);

// Loads `url`, runs its scripts for `scriptMillis` of (virtual) time, then dumps the DOM, or
// with a non-empty `screenshotPath` writes a `width`x`height` screenshot there instead.
PageRun loadPage(const std::string& chromium, const std::string& url, int scriptMillis,
                 const std::string& screenshotPath = "", int width = 1200, int height = 800);

}  // namespace harvest::webui_test
