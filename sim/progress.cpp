#include "sim/progress.h"

#include <unistd.h>

#include <chrono>

namespace harvest::sim {
namespace {

// 1520000 -> "1.52M", 140213 -> "140k", 950 -> "950".
std::string count(uint64_t n) {
  char buffer[32];
  if (n >= 1'000'000) {
    std::snprintf(buffer, sizeof(buffer), "%.3gM", static_cast<double>(n) / 1e6);
  } else if (n >= 10'000) {
    std::snprintf(buffer, sizeof(buffer), "%.3gk", static_cast<double>(n) / 1e3);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%llu", static_cast<unsigned long long>(n));
  }
  return buffer;
}

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string formatProgress(const Progress& p, double elapsed) {
  const double fraction = p.durationSeconds > 0 ? p.simulatedSeconds / p.durationSeconds : 1.0;
  char head[96];
  std::snprintf(head, sizeof(head), "simulated %.0f s of %.0f s (%.0f%%)", p.simulatedSeconds,
                p.durationSeconds, 100 * fraction);
  std::string line = std::string(head) + ", offers " + count(p.offersMade) + ", tasks " +
                     count(p.tasksLaunched) + ", elapsed " + formatDuration(elapsed);
  if (fraction > 0 && fraction < 1) {
    line += ", ETA " + formatDuration(elapsed * (1 - fraction) / fraction);
  }
  return line;
}

ProgressLine::ProgressLine(std::FILE* out)
    : ProgressLine(out, ::isatty(::fileno(out)) == 1, &steadySeconds) {}

ProgressLine::ProgressLine(std::FILE* out, bool terminal, std::function<double()> wallSeconds)
    : out_(out),
      terminal_(terminal),
      wallSeconds_(std::move(wallSeconds)),
      start_(wallSeconds_()),
      lastWrite_(start_) {}

ProgressLine::~ProgressLine() {
  if (live_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

void ProgressLine::update(const Progress& progress) {
  const double now = wallSeconds_();
  if (now - lastWrite_ < (terminal_ ? kRedrawSeconds : kLineSeconds)) return;
  lastWrite_ = now;
  const std::string line = formatProgress(progress, now - start_);
  if (terminal_) {
    // Back to the line's start, the new text, then erase what a longer old line left.
    std::fprintf(out_, "\r%s\033[K", line.c_str());
    live_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

}  // namespace harvest::sim
