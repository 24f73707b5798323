// PressureQoS: the QoS controller of agents whose tasks are real processes. It reads the host's
// pressure rather than booked amounts, and takes back usage slack lent as throttleable
// revocable tasks when the host suffers:
//
//   * cpu: the share of time runnable tasks waited for a cpu (PSI `some avg10`,
//     /proc/pressure/cpu, in percent; without PSI, an estimate of it from the run queue,
//     agent/real/host_pressure.h). Crossing the high watermark starts relief; relief ends
//     once it falls below the low watermark. While relieving, one victim per cool-down: PSI is
//     a 10 s average, so the effect of a kill shows only later, and no kill is added while an
//     earlier one is still in progress (it counts as released).
//   * memory: the share of the host's memory in use (1 - MemAvailable / MemTotal). Crossing
//     the high watermark starts relief toward the low one: victims are taken until what they
//     hold (resident) brings the projected use down to the low watermark, counting what the
//     kills still in progress hold as already released, so no extra victim is taken for them.
//
// Victims are running throttleable revocable tasks only: regular work and non-throttleable
// revocable work (on idle reservations, which the eviction ledger governs) are never touched.
// Mesos's TaskInfo has no priority, so the order is the one Koordinator uses after priority:
// largest use of the pressured resource first, then the youngest (it has lost least work).
// Every decision is pure (signals in, victims out), so the agent owns reading and killing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/ledger.h"
#include "common/duration.h"
#include "common/status.h"

namespace harvest::agent {

// What the host shows now.
struct HostPressure {
  // Percent of time some task waited for a cpu (PSI's, or the run queue's estimate of it);
  // neither readable: none, and the controller acts on memory only.
  std::optional<double> cpuSomeAvg10;
  double memTotalMb = 0;
  double memAvailableMb = 0;
};

// A throttleable revocable task as measured in the latest sample.
struct ThrottleableUsage {
  ExecutorRef executor;
  Time startedAt;
  double cpus = 0;        // Cpu time per second since the previous sample.
  double memMb = 0;       // Resident.
  bool stopping = false;  // Already being killed: what it holds counts as released.
};

struct PressureQoSOptions {
  double cpuHighPercent = 60;  // PSI cpu `some avg10`.
  double cpuLowPercent = 30;
  double memoryHigh = 0.90;  // Share of the host's memory in use.
  double memoryLow = 0.85;
  Duration cooldown = Duration::seconds(10);  // Between cpu kills.

  Status validate() const;
};

struct QoSVictim {
  ExecutorRef executor;
  std::string reason;  // For the log and the task's TASK_LOST message.
};

class PressureQoS {
 public:
  explicit PressureQoS(PressureQoSOptions options) : options_(options) {}

  // The tasks to kill now, given what the host shows and the throttleable tasks running.
  std::vector<QoSVictim> victims(Time now, const HostPressure& host,
                                 const std::vector<ThrottleableUsage>& tasks);

  bool relievingCpu() const { return relievingCpu_; }
  bool relievingMemory() const { return relievingMemory_; }

 private:
  void cpuVictim(Time now, const HostPressure& host, const std::vector<ThrottleableUsage>& tasks,
                 std::vector<QoSVictim>& out);
  void memoryVictims(const HostPressure& host, const std::vector<ThrottleableUsage>& tasks,
                     std::vector<QoSVictim>& out);

  PressureQoSOptions options_;
  bool relievingCpu_ = false;
  bool relievingMemory_ = false;
  std::optional<Time> lastCpuKill_;
};

}  // namespace harvest::agent
