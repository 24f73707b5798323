// The host's pressure as the kernel shows it: PSI's cpu `some avg10` (/proc/pressure/cpu,
// Linux 4.20 and later with PSI enabled) and /proc/meminfo's MemTotal and MemAvailable.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "agent/pressure_qos.h"
#include "common/status.h"

namespace harvest::agent {

// `proc` is /proc, or a folder laid out as it in tests. A missing pressure file leaves
// cpuSomeAvg10 empty; a missing or unreadable meminfo is an error.
Result<HostPressure> readHostPressure(const std::filesystem::path& proc = "/proc");

// The `some` line's avg10 of a PSI file's text, if it has one.
std::optional<double> psiSomeAvg10(std::string_view text);

// MemTotal and MemAvailable of /proc/meminfo's text, in MB (memTotalMb 0 if either is missing).
HostPressure memoryOf(std::string_view meminfo);

}  // namespace harvest::agent
