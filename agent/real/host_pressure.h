// The host's pressure as the kernel shows it: PSI's cpu `some avg10` (/proc/pressure/cpu,
// Linux 4.20 and later with PSI enabled) and /proc/meminfo's MemTotal and MemAvailable.
//
// A kernel without PSI (older, or booted with psi=0) still shows its run queue: /proc/stat's
// `procs_running` counts the tasks runnable now, the reader among them. More of them than cpus
// means some task waits for a cpu at that instant, which is what PSI's `some` counts over time;
// HostPressureReader averages that indicator over the samples it takes with PSI's own 10 s
// time constant, from 0 at its first sample, so the QoS controller's watermarks keep their
// meaning (a saturated run queue crosses 60% after about 9 s, as PSI's avg10 would). It is an
// estimate: a sample each --usage_interval sees instants, where PSI sees every scheduling event.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "agent/pressure_qos.h"
#include "common/status.h"
#include "common/time.h"

namespace harvest::agent {

// Where the cpu signal comes from.
enum class CpuSignal : uint8_t { kNone, kPsi, kRunQueue };
const char* toString(CpuSignal signal);

// The run queue at one instant, from /proc/stat's text.
struct RunQueue {
  int runnable = 0;  // procs_running, the reading task included.
  int cpus = 0;      // cpuN lines.
};
std::optional<RunQueue> runQueueOf(std::string_view stat);

// The host's pressure, one sample per read(): PSI where the kernel has it, else the run queue's
// estimate (above), else no cpu signal (logged once).
class HostPressureReader {
 public:
  explicit HostPressureReader(std::filesystem::path proc = "/proc") : proc_(std::move(proc)) {}
  // `now` on a monotonic clock: the run queue's average weighs each sample by the time since
  // the previous one.
  Result<HostPressure> read(Time now);
  CpuSignal cpuSignal() const { return signal_.value_or(CpuSignal::kNone); }

 private:
  std::filesystem::path proc_;
  std::optional<CpuSignal> signal_;  // Unset before the first read.
  std::optional<Time> lastSample_;
  double runQueueAverage_ = 0;
};

// `proc` is /proc, or a folder laid out as it in tests. A missing pressure file leaves
// cpuSomeAvg10 empty; a missing or unreadable meminfo is an error.
Result<HostPressure> readHostPressure(const std::filesystem::path& proc = "/proc");

// The `some` line's avg10 of a PSI file's text, if it has one.
std::optional<double> psiSomeAvg10(std::string_view text);

// MemTotal and MemAvailable of /proc/meminfo's text, in MB (memTotalMb 0 if either is missing).
HostPressure memoryOf(std::string_view meminfo);

}  // namespace harvest::agent
