// MeasuredSlack: usage slack from measurement, the estimator of an agent whose tasks are real.
//
// Per kind (cpus, mem):
//   slack = given - (peak usage over the window + margin * given),   never below zero,
// where `given` is what the regular and non-throttleable revocable tasks were allocated and
// `usage` what they were measured using. The peak over a window, not the last sample, because
// a task that is idle for one second is not idle: Borg decays a task's reservation from its
// limit toward its usage plus a safety margin over minutes; Koordinator keeps 40% (cpu) and 35%
// (memory) of what high-priority work holds back from batch work. The margin here is that
// safety, a fraction of what was given.
//
// Slack is lent only while it can be seen: no sample for `staleAfter`, and the slack is zero
// (an agent that stopped measuring must not go on lending what it no longer watches).
//
// Reporting: the master hears a new estimate only when some kind moved by more than
// `reportThreshold` of what it last heard (or to or from zero), so measurement noise does not
// turn into a stream of ESTIMATE calls and offer churn.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "resources/kinds.h"
#include "resources/quantities.h"

namespace harvest::agent {

struct MeasuredSlackOptions {
  Duration window = Duration::seconds(60);
  double margin = 0.1;           // Of what was given, per kind; in [0, 1].
  double reportThreshold = 0.1;  // Of the last reported amount, per kind; in [0, 1].
  Duration staleAfter = Duration::seconds(3);
  std::vector<KindId> kinds{kinds::kCpus, kinds::kMem};

  Status validate() const;
};

class MeasuredSlack {
 public:
  // Refused when the options are out of range.
  static Result<MeasuredSlack> create(MeasuredSlackOptions options);

  // One measurement at `now`: what the tasks that slack is taken from were given, and what they
  // used (cpus as a rate over the last interval, mem as resident bytes in MB). Samples arrive in
  // time order; those older than the window are dropped.
  void addSample(Time now, const Quantities& given, const Quantities& used);

  // The slack per kind at `now` (from the latest sample's `given` and the window's peak).
  Quantities slack(Time now) const;

  // The slack to report at `now` if it moved enough since the last report (the first call
  // always reports); remembers it as reported.
  std::optional<Quantities> report(Time now);

 private:
  explicit MeasuredSlack(MeasuredSlackOptions options) : options_(std::move(options)) {}
  bool movedEnough(const Quantities& next) const;

  struct Sample {
    Time at;
    Quantities given;
    Quantities used;
  };
  MeasuredSlackOptions options_;
  std::deque<Sample> samples_;
  std::optional<Quantities> reported_;
};

}  // namespace harvest::agent
