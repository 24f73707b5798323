// Allocator traces (trace/trace_reader.h), as harvest-replay reads them: a file that may be
// cut short, from another version, damaged, or not a trace at all.
//
// The first byte picks what the rest is. Even: the file as it is. Odd: the records only,
// behind the magic and a valid header, so that mutations reach the records instead of all
// dying on the header. Every record read is described as --check and --diff describe calls
// and callbacks (which decodes their resources). Beyond "no crash": a record read re-encodes
// to bytes that read back to the same record.
//
// Seeds: harvest-tracegen --agents=2 --frameworks=2 --roles=2 --duration=3secs, whole
// (whole.trace), its records alone (records.bin), and cut in half (cut-short.trace).
#include "trace/trace_reader.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <memory>
#include <string>

#include "fuzz/fuzz_support.h"
#include "trace/replayer.h"
#include "trace/trace_format.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harvest::fuzz::quietLogs();
  // Protobuf logs every string field that is not UTF-8; mutated traces are full of them.
  static google::protobuf::LogSilencer silencer;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(harvest::fuzz::asText(data + 1, size - 1));
  if (data[0] % 2 == 1) {
    harvest::v1::trace::TraceHeader header;
    header.set_format_version(harvest::trace::kTraceFormatVersion);
    std::string framed(harvest::trace::kTraceMagic);
    harvest::trace::appendVarint(header.ByteSizeLong(), &framed);
    framed += header.SerializeAsString();
    bytes = framed + bytes;
  }
  harvest::Result<std::unique_ptr<harvest::trace::TraceReader>> reader =
      harvest::trace::TraceReader::fromBytes(std::move(bytes), "fuzzed trace");
  if (!reader.ok()) return 0;
  harvest::v1::trace::TraceRecord record;
  while (true) {
    harvest::Result<bool> next = (*reader)->next(&record);
    if (!next.ok() || !*next) break;
    (void)harvest::trace::describeCall(record);
    for (const auto& callback : record.callbacks()) {
      (void)harvest::trace::describeCallback(callback);
    }
    // Compared as bytes: a NaN weight is a value a trace may hold, and equal to nothing.
    const std::string encoded = record.SerializePartialAsString();
    harvest::v1::trace::TraceRecord again;
    if (!again.ParsePartialFromString(encoded) || again.SerializePartialAsString() != encoded) {
      harvest::fuzz::fail("a record read does not read back the same after re-encoding");
    }
  }
  return 0;
}
