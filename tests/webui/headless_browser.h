// Headless Chromium for the web UI's tests: loads a page, lets its scripts run, and hands back
// the DOM it ended with (or a screenshot) and what it logged. Each run is its own process
// group, stopped by that group's id once done or past its deadline: nothing of it outlives the
// call.
#pragma once

#include <optional>
#include <string>

namespace harvest::webui_test {

// The chromium binary, or nullopt when none is installed (the test command installs it).
std::optional<std::string> findChromium();

struct PageRun {
  bool finished = false;  // Exited by itself before the deadline.
  std::string dom;        // With dumpDom.
  std::string log;        // What the browser logged (console messages included).
};

// Loads `url`, runs its scripts for `scriptMillis` of (virtual) time, then dumps the DOM, or
// with a non-empty `screenshotPath` writes a `width`x`height` screenshot there instead.
PageRun loadPage(const std::string& chromium, const std::string& url, int scriptMillis,
                 const std::string& screenshotPath = "", int width = 1200, int height = 800);

}  // namespace harvest::webui_test
