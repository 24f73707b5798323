// The allocator's argument and callback types to and from the trace's protobufs
// (protos/trace.proto). Resources go through resources/proto, so a trace reads back into
// exactly the Resources that were written; amounts are kept as Scalar's fixed point.
//
// Decoding checks what it reads (a trace is input from outside) and names what is wrong.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <map>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "common/status.h"
#include "protos/trace.pb.h"

namespace harvest::trace {

using google::protobuf::RepeatedPtrField;
namespace proto = v1::trace;

void encode(const Resources& resources, RepeatedPtrField<v1::Resource>* out);
Result<Resources> decodeResources(const RepeatedPtrField<v1::Resource>& in);

void encode(const Quantities& quantities, RepeatedPtrField<proto::Amount>* out);
Result<Quantities> decodeQuantities(const RepeatedPtrField<proto::Amount>& in);

void encode(const ResourceLimits& limits, proto::Limits* out);
Result<ResourceLimits> decodeLimits(const proto::Limits& in);

// usedByAgent / usedByFramework: holder -> role -> resources.
void encode(const std::map<std::string, ResourcesByRole>& holdings,
            RepeatedPtrField<proto::Holding>* out);
Result<std::map<std::string, ResourcesByRole>> decodeHoldings(
    const RepeatedPtrField<proto::Holding>& in);

void encode(const std::vector<ResourceConversion>& conversions,
            RepeatedPtrField<proto::Conversion>* out);
Result<std::vector<ResourceConversion>> decodeConversions(
    const RepeatedPtrField<proto::Conversion>& in);

// The callbacks, in the form a replay compares: a replayed callback encodes to the same bytes
// as the recorded one exactly when the allocator called back the same thing.
proto::Callback encodeOffer(proto::Callback::Kind kind, const std::string& framework,
                            const OfferedResources& offered);
proto::Callback encodeInverseOffer(const std::string& framework,
                                   const std::map<std::string, InverseOfferRequest>& byAgent);

}  // namespace harvest::trace
