#include "trace/diff.h"

#include "trace/replayer.h"

namespace harvest::trace {

namespace {

void count(const ReplayedCall& call, ReplaySummary& summary) {
  if (!call.status.ok()) ++summary.refusedCalls;
  if (call.isAllocate) summary.allocateMillis.push_back(call.wallMillis);
  for (const v1::trace::Callback& callback : call.callbacks) {
    switch (callback.kind()) {
      case v1::trace::Callback::OFFER:
        for (const v1::trace::OfferedResource& offer : callback.offered()) {
          ++summary.offers[callback.framework()][offer.role()];
        }
        break;
      case v1::trace::Callback::RESCIND:
        summary.rescinds += static_cast<uint64_t>(callback.offered_size());
        break;
      case v1::trace::Callback::INVERSE_OFFER:
        summary.inverseOffers += static_cast<uint64_t>(callback.requests_size());
        break;
    }
  }
}

bool same(const ReplayedCall& a, const ReplayedCall& b) {
  if (a.status.ok() != b.status.ok() || a.status.message() != b.status.message()) return false;
  if (a.callbacks.size() != b.callbacks.size()) return false;
  for (size_t i = 0; i < a.callbacks.size(); ++i) {
    if (a.callbacks[i].SerializePartialAsString() != b.callbacks[i].SerializePartialAsString())
      return false;
  }
  return true;
}

std::string describeOutcome(const ReplayedCall& call) {
  std::string text = call.status.ok() ? "" : "\n    refused: " + call.status.message();
  for (const v1::trace::Callback& callback : call.callbacks) {
    text += "\n    " + describeCallback(callback);
  }
  return text.empty() ? "\n    nothing" : text;
}

}  // namespace

Result<DiffResult> diffTrace(TraceReader& reader, ReplayTarget first, ReplayTarget second,
                             size_t maxDifferences) {
  Replayer a(std::move(first));
  Replayer b(std::move(second));
  DiffResult result;
  v1::trace::TraceRecord record;
  while (true) {
    Result<bool> read = reader.next(&record);
    if (!read.ok()) return read.status();
    if (!*read) break;
    ++result.records;
    Result<ReplayedCall> ra = a.replay(record);
    if (!ra.ok()) {
      return Status::corruption("record " + std::to_string(result.records) + " (" +
                                describeCall(record) + ") does not decode: " + ra.message());
    }
    Result<ReplayedCall> rb = b.replay(record);
    if (!rb.ok()) return rb.status();
    count(*ra, result.first);
    count(*rb, result.second);
    if (same(*ra, *rb)) continue;
    ++result.differingCalls;
    if (result.differences.size() < maxDifferences) {
      result.differences.push_back("record " + std::to_string(result.records) + " (" +
                                   describeCall(record) + ")\n  first:" + describeOutcome(*ra) +
                                   "\n  second:" + describeOutcome(*rb));
    }
  }
  return result;
}

}  // namespace harvest::trace
