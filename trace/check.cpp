#include "trace/check.h"

#include "trace/replayer.h"

namespace harvest::trace {

namespace {

std::string outcome(const std::string& error) {
  return error.empty() ? "succeeded" : "failed: " + error;
}

// The first difference between what was recorded and what was replayed, if any.
std::optional<std::string> compare(const v1::trace::TraceRecord& recorded,
                                   const ReplayedCall& replayed) {
  const std::string replayedError = replayed.status.ok() ? "" : replayed.status.message();
  if (recorded.error() != replayedError) {
    return "the recorded call " + outcome(recorded.error()) + "; the replayed call " +
           outcome(replayedError);
  }
  const int count = recorded.callbacks_size();
  const int replayedCount = static_cast<int>(replayed.callbacks.size());
  for (int i = 0; i < std::max(count, replayedCount); ++i) {
    const std::string position = "callback " + std::to_string(i + 1);
    if (i >= count) {
      return position + " was not recorded; the replay made " +
             describeCallback(replayed.callbacks[static_cast<size_t>(i)]);
    }
    if (i >= replayedCount) {
      return position + " was recorded as " + describeCallback(recorded.callbacks(i)) +
             "; the replay made no more (" + std::to_string(replayedCount) + " of " +
             std::to_string(count) + ")";
    }
    if (recorded.callbacks(i).SerializePartialAsString() !=
        replayed.callbacks[static_cast<size_t>(i)].SerializePartialAsString()) {
      return position + " differs:\n  recorded: " + describeCallback(recorded.callbacks(i)) +
             "\n  replayed: " + describeCallback(replayed.callbacks[static_cast<size_t>(i)]);
    }
  }
  return std::nullopt;
}

}  // namespace

Result<CheckResult> checkTrace(TraceReader& reader, ReplayTarget target) {
  Replayer replayer(std::move(target));
  CheckResult result;
  v1::trace::TraceRecord record;
  while (true) {
    Result<bool> read = reader.next(&record);
    if (!read.ok()) return read.status();
    if (!*read) break;
    if (result.records == 0) result.firstTime = Time::fromNanos(record.time());
    result.lastTime = Time::fromNanos(record.time());
    ++result.records;
    Result<ReplayedCall> replayed = replayer.replay(record);
    if (!replayed.ok()) {
      return Status::corruption("record " + std::to_string(result.records) + " (" +
                                describeCall(record) + ") does not decode: " + replayed.message());
    }
    if (replayed->isAllocate) result.allocateMillis.push_back(replayed->wallMillis);
    if (std::optional<std::string> difference = compare(record, *replayed)) {
      result.divergence = "record " + std::to_string(result.records) + " (" + describeCall(record) +
                          "): " + *difference;
      return result;
    }
    result.callbacks += replayed->callbacks.size();
  }
  return result;
}

}  // namespace harvest::trace
