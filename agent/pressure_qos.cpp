#include "agent/pressure_qos.h"

#include <algorithm>
#include <cstdio>

namespace harvest::agent {
namespace {

std::string percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", value);
  return text;
}

// Largest use first (of cpu or memory, by `use`), then the youngest, then by id: one order
// whatever order the tasks came in.
template <typename Use>
std::vector<const ThrottleableUsage*> byLargestUse(const std::vector<ThrottleableUsage>& tasks,
                                                   Use use) {
  std::vector<const ThrottleableUsage*> running;
  for (const ThrottleableUsage& task : tasks) {
    if (!task.stopping) running.push_back(&task);
  }
  std::sort(running.begin(), running.end(), [&](const auto* a, const auto* b) {
    if (use(*a) != use(*b)) return use(*a) > use(*b);
    if (a->startedAt != b->startedAt) return a->startedAt > b->startedAt;
    return a->executor < b->executor;
  });
  return running;
}

}  // namespace

Status PressureQoSOptions::validate() const {
  if (!(cpuLowPercent >= 0 && cpuLowPercent <= cpuHighPercent && cpuHighPercent <= 100)) {
    return Status::invalidArgument("cpu pressure watermarks need 0 <= low <= high <= 100");
  }
  if (!(memoryLow > 0 && memoryLow <= memoryHigh && memoryHigh <= 1)) {
    return Status::invalidArgument("memory watermarks need 0 < low <= high <= 1");
  }
  if (cooldown < Duration::zero())
    return Status::invalidArgument("the cool-down cannot be negative");
  return Status();
}

std::vector<QoSVictim> PressureQoS::victims(Time now, const HostPressure& host,
                                            const std::vector<ThrottleableUsage>& tasks) {
  std::vector<QoSVictim> out;
  memoryVictims(host, tasks, out);
  // A task killed for memory relieves the cpu too: one kill per sample at most for the cpu.
  if (out.empty()) cpuVictim(now, host, tasks, out);
  return out;
}

void PressureQoS::cpuVictim(Time now, const HostPressure& host,
                            const std::vector<ThrottleableUsage>& tasks,
                            std::vector<QoSVictim>& out) {
  if (!host.cpuSomeAvg10) return;
  const double pressure = *host.cpuSomeAvg10;
  if (pressure > options_.cpuHighPercent) relievingCpu_ = true;
  if (pressure < options_.cpuLowPercent) relievingCpu_ = false;
  if (!relievingCpu_) return;
  if (lastCpuKill_ && now - *lastCpuKill_ < options_.cooldown) return;
  // A kill still in progress is relief on its way.
  if (std::any_of(tasks.begin(), tasks.end(), [](const auto& t) { return t.stopping; })) return;
  const std::vector<const ThrottleableUsage*> order =
      byLargestUse(tasks, [](const ThrottleableUsage& t) { return t.cpus; });
  if (order.empty()) return;
  out.push_back({order.front()->executor, "cpu pressure " + percent(pressure) +
                                              " (some avg10) above the high watermark " +
                                              percent(options_.cpuHighPercent)});
  lastCpuKill_ = now;
}

void PressureQoS::memoryVictims(const HostPressure& host,
                                const std::vector<ThrottleableUsage>& tasks,
                                std::vector<QoSVictim>& out) {
  if (host.memTotalMb <= 0) return;
  const double used = host.memTotalMb - host.memAvailableMb;
  const double share = used / host.memTotalMb;
  if (share > options_.memoryHigh) relievingMemory_ = true;
  if (share < options_.memoryLow) relievingMemory_ = false;
  if (!relievingMemory_) return;
  double projected = used;
  for (const ThrottleableUsage& task : tasks) {
    if (task.stopping) projected -= task.memMb;
  }
  const double target = options_.memoryLow * host.memTotalMb;
  for (const ThrottleableUsage* task :
       byLargestUse(tasks, [](const ThrottleableUsage& t) { return t.memMb; })) {
    if (projected <= target) break;
    out.push_back({task->executor, "memory use " + percent(100 * share) +
                                       " of the host above the high watermark " +
                                       percent(100 * options_.memoryHigh)});
    projected -= task->memMb;
  }
}

}  // namespace harvest::agent
