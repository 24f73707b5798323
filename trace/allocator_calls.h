// The allocator calls a trace records, one line each: the list the RecordingAllocator's
// overrides and the Replayer's dispatch are both generated from.
//
// Why an X-macro: the recorder needs each call as a C++ declaration (its return type, name
// and parameters) and the replayer needs it as a case of the record's oneof; no template can
// produce a member function's declaration or a case label, and writing them out by hand put
// the Allocator interface in four more places that had to change together.
//
// Columns: CALL(Name, field, Return, method, (parameters), (arguments))
//   Name       the record's case, Record::k<Name>, and the codec pair encode<Name> /
//              decode<Name> (trace/call_codec.h).
//   field      the TraceRecord field holding the call (protos/trace.proto).
//   Return, method, (parameters)   the Allocator member function, as allocator.h declares it.
//   (arguments)  its parameter names, in order, to pass them on.
// OVERLOAD(...) has the same columns: another overload of the call on the line above, recorded
// in the same field. Its decode<Name> returns a std::variant of the overloads' arguments.
//
// To add an allocator call: add its field to TraceRecord's oneof (protos/trace.proto), one line
// here, and its encode<Name> / decode<Name> pair in trace/call_codec.h and .cpp. A field
// without a line fails the build: the replayer's switch then misses a case (-Wswitch).
//
// Not in the list: initialize (the recorder writes the trace's header and wraps the callbacks
// there, the replayer gives its own callbacks), metrics and roleHistory (they change nothing,
// so they are not recorded and only the recorder passes them on), written out in
// recording_allocator.cpp (and initialize in replayer.cpp).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocator/allocator.h"

// clang-format off
#define HARVEST_ALLOCATOR_CALLS(CALL, OVERLOAD)                                                   \
  CALL(Recover, recover, Status, recover,                                                         \
       (int expectedAgents, const std::map<std::string, Quota>& quotas), (expectedAgents, quotas)) \
  CALL(AddFramework, add_framework, Status, addFramework,                                         \
       (const std::string& framework, const v1::FrameworkInfo& info,                              \
        const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,                   \
        const FrameworkOptions& options),                                                         \
       (framework, info, usedByAgent, active, options))                                           \
  CALL(RemoveFramework, remove_framework, Status, removeFramework,                                \
       (const std::string& framework), (framework))                                               \
  CALL(ActivateFramework, activate_framework, Status, activateFramework,                          \
       (const std::string& framework), (framework))                                               \
  CALL(DeactivateFramework, deactivate_framework, Status, deactivateFramework,                    \
       (const std::string& framework), (framework))                                               \
  CALL(UpdateFramework, update_framework, Status, updateFramework,                                \
       (const std::string& framework, const v1::FrameworkInfo& info,                              \
        const FrameworkOptions& options),                                                         \
       (framework, info, options))                                                                \
  CALL(AddAgent, add_agent, Status, addAgent,                                                     \
       (const std::string& agent, const v1::AgentInfo& info,                                      \
        const std::optional<v1::Unavailability>& unavailability, const Resources& total,          \
        const std::map<std::string, ResourcesByRole>& usedByFramework),                           \
       (agent, info, unavailability, total, usedByFramework))                                     \
  CALL(RemoveAgent, remove_agent, Status, removeAgent, (const std::string& agent), (agent))       \
  CALL(UpdateAgent, update_agent, Status, updateAgent,                                            \
       (const std::string& agent, const v1::AgentInfo& info,                                      \
        const std::optional<Resources>& total, const std::optional<Resources>& oversubscribed),   \
       (agent, info, total, oversubscribed))                                                      \
  CALL(ActivateAgent, activate_agent, Status, activateAgent, (const std::string& agent), (agent)) \
  CALL(DeactivateAgent, deactivate_agent, Status, deactivateAgent,                                \
       (const std::string& agent), (agent))                                                       \
  CALL(UpdateUnavailability, update_unavailability, Status, updateUnavailability,                 \
       (const std::string& agent, const std::optional<v1::Unavailability>& unavailability),       \
       (agent, unavailability))                                                                   \
  CALL(UpdateInverseOffer, update_inverse_offer, Status, updateInverseOffer,                      \
       (const std::string& agent, const std::string& framework, std::optional<bool> accepted,     \
        const std::optional<v1::Filters>& filters),                                               \
       (agent, framework, accepted, filters))                                                     \
  CALL(UpdateAllocation, update_allocation, Status, updateAllocation,                             \
       (const std::string& framework, const std::string& agent, const std::string& role,          \
        const Resources& offered, const std::vector<ResourceConversion>& conversions),            \
       (framework, agent, role, offered, conversions))                                            \
  CALL(UpdateAvailable, update_available, Status, updateAvailable,                                \
       (const std::string& agent, const std::vector<ResourceConversion>& conversions),            \
       (agent, conversions))                                                                      \
  CALL(RecoverResources, recover_resources, Status, recoverResources,                             \
       (const std::string& framework, const std::string& agent, const std::string& role,          \
        const Resources& resources, const std::optional<v1::Filters>& filters),                   \
       (framework, agent, role, resources, filters))                                              \
  CALL(SuppressOffers, suppress_offers, Status, suppressOffers,                                   \
       (const std::string& framework, const std::set<std::string>& roles), (framework, roles))    \
  CALL(ReviveOffers, revive_offers, Status, reviveOffers,                                         \
       (const std::string& framework, const std::set<std::string>& roles), (framework, roles))    \
  CALL(UpdateQuota, update_quota, Status, updateQuota,                                            \
       (const std::string& role, const Quota& quota), (role, quota))                              \
  CALL(UpdateWeights, update_weights, Status, updateWeights,                                      \
       (const std::map<std::string, double>& weights), (weights))                                 \
  CALL(Pause, pause, void, pause, (), ())                                                         \
  CALL(Resume, resume, void, resume, (), ())                                                      \
  CALL(PlacementEvent, placement_event, Status, placementEvent,                                   \
       (const std::string& agent, const std::string& role, PlacementEvent event,                  \
        Time startedAt),                                                                     \
       (agent, role, event, startedAt))                                                           \
  CALL(Allocate, allocate, void, allocate, (), ())                                                \
  OVERLOAD(Allocate, allocate, void, allocate, (const std::set<std::string>& agents), (agents))   \
  CALL(ExplainDecisions, explain_decisions, Result<DecisionExplanation>, explainDecisions,        \
       (const std::string& framework, const std::optional<std::string>& agent),                   \
       (framework, agent))
// clang-format on
