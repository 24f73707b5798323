// Progress of a long scenario run, on stderr: on a terminal one live line redrawn in place,
// otherwise (a log file, CI) a plain line every few seconds of wall time, so a run that takes
// minutes shows it is alive without flooding a log.
//
//   simulated 1200 s of 3600 s (33%), offers 1.52M, tasks 140k, elapsed 21 s, ETA 42 s
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "sim/harness.h"

namespace harvest::sim {

// One progress line, without terminal control characters. The ETA assumes the rest of the run
// goes at the pace so far.
std::string formatProgress(const Progress& progress, double elapsedWallSeconds);

class ProgressLine {
 public:
  // On `out`: live when it is a terminal, plain lines otherwise; the wall clock is real.
  explicit ProgressLine(std::FILE* out);
  // For tests: whether `out` counts as a terminal, and the wall clock in seconds.
  ProgressLine(std::FILE* out, bool terminal, std::function<double()> wallSeconds);
  // Clears a live line, so that what is printed next starts on a clean line.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const Progress& progress);
  // For HarnessOptions::progress; valid while this object lives.
  std::function<void(const Progress&)> callback() {
    return [this](const Progress& p) { update(p); };
  }

  // A terminal is redrawn at most this often; other outputs get a line this often.
  static constexpr double kRedrawSeconds = 0.1;
  static constexpr double kLineSeconds = 5.0;

 private:
  std::FILE* out_;
  bool terminal_;
  std::function<double()> wallSeconds_;
  double start_;
  double lastWrite_;
  bool live_ = false;  // A live line is on screen.
};

}  // namespace harvest::sim
