#include "trace/recording_allocator.h"

#include <glog/logging.h>

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common/results.h"
#include "trace/call_codec.h"
#include "trace/trace_format.h"

namespace harvest::trace {

RecordingAllocator::RecordingAllocator(std::unique_ptr<Allocator> allocator,
                                       std::unique_ptr<TraceWriter> writer, RecordedModule module)
    : writer_(std::move(writer)), module_(std::move(module)), allocator_(std::move(allocator)) {}

RecordingAllocator::~RecordingAllocator() {
  // The allocator goes first: it may still read the clock, which reads clock_.
  allocator_.reset();
}

bool RecordingAllocator::recording() const {
  return !stopped_ && !writer_->failed();
}

template <typename Describe, typename Call>
Status RecordingAllocator::record(Describe&& describe, Call&& call) {
  if (inCall_) {
    // A trace is a sequence of calls; a call made from inside another (from a callback) has
    // no place in it that a replay could reproduce.
    if (!stopped_) {
      LOG(ERROR) << "The allocator was called from inside another call; recording to '"
                 << writer_->path() << "' stops";
      stopped_ = true;
    }
    return call();
  }
  callTime_ = clock_ ? clock_() : Time();
  inCall_ = true;
  const bool recordThis = recording();
  if (recordThis) {
    current_.Clear();
    current_.set_time(callTime_.nanos());
    describe(current_);
  }
  Status status = call();
  inCall_ = false;
  if (recordThis) {
    if (!status.ok()) current_.set_error(status.message());
    writer_->append(current_);
  }
  return status;
}

template <typename Describe, typename Call>
auto RecordingAllocator::recordCall(Describe&& describe, Call&& call) -> decltype(call()) {
  using Answer = decltype(call());
  if constexpr (std::is_same_v<Answer, Status>) {
    return record(describe, call);
  } else if constexpr (std::is_void_v<Answer>) {
    (void)record(describe, [&] {
      call();
      return Status();
    });
  } else {
    std::optional<Answer> answer;
    (void)record(describe, [&] {
      answer = call();
      return answer->status();
    });
    return std::move(*answer);
  }
}

Status RecordingAllocator::initialize(AllocatorOptions options, AllocatorCallbacks callbacks) {
  clock_ = options.clock;
  options.clock = [this] { return inCall_ ? callTime_ : clock_(); };
  // The callbacks are recorded into the call being made, then passed on.
  AllocatorCallbacks recorded;
  recorded.offer = [this, offer = std::move(callbacks.offer)](const std::string& framework,
                                                              OfferedResources& offers) {
    if (inCall_ && recording()) {
      *current_.add_callbacks() = encodeOffer(proto::Callback::OFFER, framework, offers);
    }
    if (offer) offer(framework, offers);
  };
  recorded.rescind = [this, rescind = std::move(callbacks.rescind)](const std::string& framework,
                                                                    OfferedResources& rescinded) {
    if (inCall_ && recording()) {
      *current_.add_callbacks() = encodeOffer(proto::Callback::RESCIND, framework, rescinded);
    }
    if (rescind) rescind(framework, rescinded);
  };
  recorded.inverseOffer = [this, inverse = std::move(callbacks.inverseOffer)](
                              const std::string& framework,
                              const std::map<std::string, InverseOfferRequest>& byAgent) {
    if (inCall_ && recording()) *current_.add_callbacks() = encodeInverseOffer(framework, byAgent);
    if (inverse) inverse(framework, byAgent);
  };

  proto::TraceHeader header;
  header.set_format_version(kTraceFormatVersion);
  header.set_harvest_version(harvestVersion());
  header.set_module(module_.name);
  header.set_library(module_.library);
  for (const auto& [key, value] : module_.parameters) {
    proto::ModuleParameter* parameter = header.add_parameters();
    parameter->set_key(key);
    parameter->set_value(value);
  }
  header.set_seed(options.seed);
  writer_->writeHeader(header);
  LOG(INFO) << "Recording the allocator's calls to '" << writer_->path() << "'";
  return record([](Record& r) { r.mutable_initialize(); },
                [&] { return allocator_->initialize(std::move(options), std::move(recorded)); });
}

#define HARVEST_RECORDED_CALL(Name, field, Return, method, parameters, arguments)        \
  Return RecordingAllocator::method parameters {                                         \
    return recordCall(                                                                   \
        [&](Record& r) {                                                                 \
          std::apply([&](const auto&... a) { encode##Name(r.mutable_##field(), a...); }, \
                     std::forward_as_tuple arguments);                                   \
        },                                                                               \
        [&] { return allocator_->method arguments; });                                   \
  }
HARVEST_ALLOCATOR_CALLS(HARVEST_RECORDED_CALL, HARVEST_RECORDED_CALL)
#undef HARVEST_RECORDED_CALL

std::map<std::string, double> RecordingAllocator::metrics() const {
  return allocator_->metrics();
}

Result<AgentRoleHistory> RecordingAllocator::roleHistory(const std::string& agent) const {
  return allocator_->roleHistory(agent);
}

}  // namespace harvest::trace
