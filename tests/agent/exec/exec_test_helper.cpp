// A task with a known appetite, for the usage tests:
//   exec_test_helper spin <ms>   burns <ms> of its own cpu time, then idles
//   exec_test_helper hold <MiB>  allocates and touches <MiB>, then idles
// It prints "ready" once the appetite is met, and idles until it is killed, so a test measures
// it at a moment it chooses.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace {

long long cpuMillis() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec * 1000LL + now.tv_nsec / 1'000'000;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s spin <ms> | hold <MiB>\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long long amount = std::atoll(argv[2]);
  if (mode == "spin") {
    while (cpuMillis() < amount) {
    }
  } else if (mode == "hold") {
    const size_t bytes = static_cast<size_t>(amount) << 20;
    auto* memory = static_cast<char*>(std::malloc(bytes));
    if (memory == nullptr) return 3;
    std::memset(memory, 1, bytes);  // Touched, so resident.
  } else {
    return 2;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) pause();
}
