#include "agent/real/host_pressure.h"

#include <glog/logging.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace harvest::agent {
namespace {

std::optional<std::string> readText(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> numberAfter(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc() || end == rest.data()) return std::nullopt;
  return value;
}

// PSI's avg10 decays with a 10 s time constant; the run queue's estimate does the same.
constexpr double kAverageSeconds = 10;

}  // namespace

const char* toString(CpuSignal signal) {
  switch (signal) {
    case CpuSignal::kPsi:
      return "PSI (/proc/pressure/cpu)";
    case CpuSignal::kRunQueue:
      return "the run queue (/proc/stat procs_running, no PSI)";
    case CpuSignal::kNone:
      break;
  }
  return "none (no /proc/pressure/cpu or /proc/stat): memory only";
}

std::optional<RunQueue> runQueueOf(std::string_view stat) {
  RunQueue queue;
  std::optional<double> running;
  size_t at = 0;
  while (at < stat.size()) {
    size_t end = stat.find('\n', at);
    if (end == std::string_view::npos) end = stat.size();
    const std::string_view line = stat.substr(at, end - at);
    // "cpu0 ...", "cpu1 ...": one per cpu; "cpu " is the total.
    if (line.starts_with("cpu") && line.size() > 3 && line[3] >= '0' && line[3] <= '9') {
      ++queue.cpus;
    } else if (line.starts_with("procs_running")) {
      running = numberAfter(line, "procs_running");
    }
    at = end + 1;
  }
  // A count of tasks: a whole number the kernel keeps far below a million.
  if (!running || *running < 0 || *running > 1e6 || *running != std::floor(*running) ||
      queue.cpus == 0) {
    return std::nullopt;
  }
  queue.runnable = static_cast<int>(*running);
  return queue;
}

std::optional<double> psiSomeAvg10(std::string_view text) {
  // "some avg10=1.23 avg60=... total=..." on the first line.
  const size_t some = text.find("some ");
  if (some == std::string_view::npos) return std::nullopt;
  const size_t end = text.find('\n', some);
  return numberAfter(text.substr(some, end == std::string_view::npos ? end : end - some), "avg10=");
}

HostPressure memoryOf(std::string_view meminfo) {
  HostPressure out;
  const std::optional<double> total = numberAfter(meminfo, "MemTotal:");
  const std::optional<double> available = numberAfter(meminfo, "MemAvailable:");
  if (!total || !available) return out;
  out.memTotalMb = *total / 1024;  // kB.
  out.memAvailableMb = *available / 1024;
  return out;
}

Result<HostPressure> HostPressureReader::read(Time now) {
  Result<HostPressure> read = readHostPressure(proc_);
  if (!read.ok()) return read;
  HostPressure host = *read;
  CpuSignal signal = host.cpuSomeAvg10 ? CpuSignal::kPsi : CpuSignal::kNone;
  if (!host.cpuSomeAvg10) {
    const std::optional<std::string> stat = readText(proc_ / "stat");
    if (const std::optional<RunQueue> queue = stat ? runQueueOf(*stat) : std::nullopt) {
      signal = CpuSignal::kRunQueue;
      // Someone waits now when more tasks than cpus are runnable, the reader not counted.
      const double waiting = queue->runnable - 1 > queue->cpus ? 100.0 : 0.0;
      // As PSI's average, it starts at 0: one instant is not 10 s of waiting.
      if (lastSample_) {
        const double seconds = static_cast<double>((now - *lastSample_).nanos()) / 1e9;
        const double weight = 1 - std::exp(-std::max(seconds, 0.0) / kAverageSeconds);
        runQueueAverage_ += weight * (waiting - runQueueAverage_);
      }
      lastSample_ = now;
      host.cpuSomeAvg10 = runQueueAverage_;
    }
  }
  if (signal != signal_) LOG(INFO) << "QoS: the cpu signal is " << toString(signal);
  signal_ = signal;
  return host;
}

Result<HostPressure> readHostPressure(const std::filesystem::path& proc) {
  const std::optional<std::string> meminfo = readText(proc / "meminfo");
  if (!meminfo) return Status::unavailable("cannot read " + (proc / "meminfo").string());
  HostPressure out = memoryOf(*meminfo);
  if (out.memTotalMb <= 0) {
    return Status::unavailable((proc / "meminfo").string() + " has no MemTotal or MemAvailable");
  }
  if (const std::optional<std::string> cpu = readText(proc / "pressure/cpu")) {
    out.cpuSomeAvg10 = psiSomeAvg10(*cpu);
  }
  return out;
}

}  // namespace harvest::agent
