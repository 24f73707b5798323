#include "trace/replayer.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "trace/allocator_calls.h"
#include "trace/call_codec.h"

namespace harvest::trace {

namespace {

using Record = proto::TraceRecord;

// Makes the call with `arguments` and gives back its Status; a call that answers nothing
// succeeded, and of a Result only the Status is compared.
template <typename Method, typename... Types>
Status callWith(Method& method, std::tuple<Types...>& arguments) {
  using Answer = std::invoke_result_t<Method&, Types&...>;
  if constexpr (std::is_void_v<Answer>) {
    std::apply(method, arguments);
    return Status();
  } else if constexpr (std::is_same_v<Answer, Status>) {
    return std::apply(method, arguments);
  } else {
    return std::apply(method, arguments).status();
  }
}

// One of a call's overloads, as its decode chose.
template <typename Method, typename... Overloads>
Status callWith(Method& method, std::variant<Overloads...>& arguments) {
  return std::visit([&method](auto& chosen) { return callWith(method, chosen); }, arguments);
}

std::string resourcesText(const RepeatedPtrField<v1::Resource>& resources) {
  Result<Resources> decoded = decodeResources(resources);
  return decoded.ok() ? decoded->toString() : "(undecodable: " + decoded.message() + ")";
}

}  // namespace

Replayer::Replayer(ReplayTarget target)
    : allocator_(*target.allocator),
      options_(std::move(target.options)),
      weights_(std::move(target.weights)) {
  options_.clock = [this] { return now_; };
}

Result<ReplayedCall> Replayer::replay(const Record& record) {
  now_ = Time::fromNanos(record.time());
  ReplayedCall out;
  callbacks_ = &out.callbacks;
  out.isAllocate = record.has_allocate();
  Status decoded = call(record, out);
  callbacks_ = nullptr;
  if (!decoded.ok()) return decoded;
  return out;
}

// Each call decodes its arguments first (a failure is the trace's), then is made.
Status Replayer::call(const Record& record, ReplayedCall& out) {
  switch (record.call_case()) {
    case Record::kInitialize:
      out.status = initialize();
      return Status();
#define HARVEST_REPLAYED_CALL(Name, field, Return, method, parameters, arguments) \
  case Record::k##Name:                                                           \
    return make(decode##Name(record.field()), out,                                \
                [this](const auto&... a) { return allocator_.method(a...); });
// An overload is decoded with the call above it: its decode tells which one to make.
#define HARVEST_OVERLOAD_OF_THE_CALL_ABOVE(Name, field, Return, method, parameters, arguments)
      HARVEST_ALLOCATOR_CALLS(HARVEST_REPLAYED_CALL, HARVEST_OVERLOAD_OF_THE_CALL_ABOVE)
#undef HARVEST_REPLAYED_CALL
#undef HARVEST_OVERLOAD_OF_THE_CALL_ABOVE
    case Record::CALL_NOT_SET:
      break;
  }
  return Status::corruption("a record without a call this build knows");
}

Status Replayer::initialize() {
  AllocatorCallbacks callbacks;
  callbacks.offer = [this](const std::string& framework, OfferedResources& offers) {
    if (callbacks_) callbacks_->push_back(encodeOffer(proto::Callback::OFFER, framework, offers));
  };
  callbacks.rescind = [this](const std::string& framework, OfferedResources& offers) {
    if (callbacks_) callbacks_->push_back(encodeOffer(proto::Callback::RESCIND, framework, offers));
  };
  callbacks.inverseOffer = [this](const std::string& framework,
                                  const std::map<std::string, InverseOfferRequest>& byAgent) {
    if (callbacks_) callbacks_->push_back(encodeInverseOffer(framework, byAgent));
  };
  Status status = allocator_.initialize(options_, std::move(callbacks));
  if (status.ok() && !weights_.empty()) status = allocator_.updateWeights(weights_);
  return status;
}

template <typename Arguments, typename Method>
Status Replayer::make(Result<Arguments> decoded, ReplayedCall& out, Method&& method) {
  if (!decoded.ok()) return decoded.status();
  Arguments arguments = std::move(decoded).value();
  overrideArguments(arguments);
  const auto started = std::chrono::steady_clock::now();
  out.status = callWith(method, arguments);
  out.wallMillis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return Status();
}

void Replayer::overrideArguments(std::tuple<std::map<std::string, double>>& weights) {
  for (const auto& [role, weight] : weights_) std::get<0>(weights)[role] = weight;
}

std::string describeCall(const Record& record) {
  const google::protobuf::FieldDescriptor* field =
      Record::descriptor()->FindFieldByNumber(static_cast<int>(record.call_case()));
  char time[48];
  std::snprintf(time, sizeof(time), " at %.3f s",
                Time::fromNanos(record.time()).sinceEpoch().secondsDouble());
  return (field != nullptr ? field->name() : std::string("unknown call")) + time;
}

std::string describeCallback(const proto::Callback& callback) {
  std::string text =
      proto::Callback::Kind_Name(callback.kind()) + " to " + callback.framework() + ":";
  for (const proto::OfferedResource& offer : callback.offered()) {
    text += " [role " + offer.role() + " on " + offer.agent() + ": " +
            resourcesText(offer.resources()) + "]";
  }
  for (const proto::InverseOfferRequest& request : callback.requests()) {
    text += " [agent " + request.agent() + ": " +
            (request.resources().empty() ? "everything" : resourcesText(request.resources())) + "]";
  }
  return text;
}

}  // namespace harvest::trace
