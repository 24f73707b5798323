// Role-history files (role_history/codec.h), as the allocator reloads them after a restart:
// a file may be truncated, from another version, or damaged.
//
// The first byte picks what the rest is. Even: the file as it is. Odd: the body only, wrapped
// here in a header and a footer with the right magic, version, record count and CRC-32, so
// that mutations reach the checks behind the checksum instead of all dying on it. Beyond
// "no crash": a file that decodes encodes to one that decodes to the same snapshot.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "protos/role_history.pb.h"
#include "role_history/checksum.h"
#include "role_history/codec.h"

namespace {

std::string wrapBody(std::string body) {
  harvest::v1::RoleHistoryBody parsed;
  uint64_t records = 0;
  if (parsed.ParsePartialFromString(body)) {
    for (const auto& agent : parsed.agents()) records += agent.records_size();
  }
  harvest::v1::RoleHistoryFile file;
  file.mutable_header()->set_magic(harvest::kHistoryMagic);
  file.mutable_header()->set_format_version(harvest::kHistoryFormatVersion);
  file.mutable_header()->set_save_time_nanos(1);
  file.mutable_footer()->set_record_count(records);
  file.mutable_footer()->set_body_crc32(harvest::crc32(body));
  file.set_body(std::move(body));
  return file.SerializeAsString();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = harvest::fuzz::asText(data + 1, size - 1);
  const std::string bytes = data[0] % 2 == 1 ? wrapBody(std::string(rest)) : std::string(rest);
  harvest::Result<harvest::HistorySnapshot> snapshot = harvest::decodeHistory(bytes);
  if (!snapshot.ok()) return 0;
  harvest::Result<harvest::HistorySnapshot> again =
      harvest::decodeHistory(harvest::encodeHistory(*snapshot));
  if (!again.ok()) {
    harvest::fuzz::fail("a decoded history re-encodes to a refused file: " + again.message());
  }
  if (*again != *snapshot) harvest::fuzz::fail("a decoded history changes when re-encoded");
  return 0;
}
