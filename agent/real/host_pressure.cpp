#include "agent/real/host_pressure.h"

#include <charconv>
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

}  // namespace

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
