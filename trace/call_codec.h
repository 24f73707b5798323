// Each recorded allocator call to and from its TraceRecord field (trace/allocator_calls.h lists
// the calls). encode<Name>(out, arguments...) fills the field the recorder set with the call's
// arguments; decode<Name>(in) gives them back, checked, as a tuple in the order the Allocator
// takes them, for the replayer to pass on.
//
// One pair per call, named after it: several calls take the same argument types (a framework
// id, an agent id) and differ only in the field that holds them.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "trace/trace_codec.h"

namespace harvest::trace {

// A call's arguments read back from its record, or why they could not be.
template <typename... Types>
using Decoded = Result<std::tuple<Types...>>;

void encodeRecover(proto::Recover* out, int expectedAgents,
                   const std::map<std::string, Quota>& quotas);
Decoded<int, std::map<std::string, Quota>> decodeRecover(const proto::Recover& in);

void encodeAddFramework(proto::AddFramework* out, const std::string& framework,
                        const v1::FrameworkInfo& info,
                        const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                        const FrameworkOptions& options);
Decoded<std::string, v1::FrameworkInfo, std::map<std::string, ResourcesByRole>, bool,
        FrameworkOptions>
decodeAddFramework(const proto::AddFramework& in);

void encodeRemoveFramework(std::string* out, const std::string& framework);
Decoded<std::string> decodeRemoveFramework(const std::string& in);

void encodeActivateFramework(std::string* out, const std::string& framework);
Decoded<std::string> decodeActivateFramework(const std::string& in);

void encodeDeactivateFramework(std::string* out, const std::string& framework);
Decoded<std::string> decodeDeactivateFramework(const std::string& in);

void encodeUpdateFramework(proto::UpdateFramework* out, const std::string& framework,
                           const v1::FrameworkInfo& info, const FrameworkOptions& options);
Decoded<std::string, v1::FrameworkInfo, FrameworkOptions> decodeUpdateFramework(
    const proto::UpdateFramework& in);

void encodeAddAgent(proto::AddAgent* out, const std::string& agent, const v1::AgentInfo& info,
                    const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                    const std::map<std::string, ResourcesByRole>& usedByFramework);
Decoded<std::string, v1::AgentInfo, std::optional<v1::Unavailability>, Resources,
        std::map<std::string, ResourcesByRole>>
decodeAddAgent(const proto::AddAgent& in);

void encodeRemoveAgent(std::string* out, const std::string& agent);
Decoded<std::string> decodeRemoveAgent(const std::string& in);

void encodeUpdateAgent(proto::UpdateAgent* out, const std::string& agent, const v1::AgentInfo& info,
                       const std::optional<Resources>& total,
                       const std::optional<Resources>& oversubscribed);
Decoded<std::string, v1::AgentInfo, std::optional<Resources>, std::optional<Resources>>
decodeUpdateAgent(const proto::UpdateAgent& in);

void encodeActivateAgent(std::string* out, const std::string& agent);
Decoded<std::string> decodeActivateAgent(const std::string& in);

void encodeDeactivateAgent(std::string* out, const std::string& agent);
Decoded<std::string> decodeDeactivateAgent(const std::string& in);

void encodeUpdateUnavailability(proto::UpdateUnavailability* out, const std::string& agent,
                                const std::optional<v1::Unavailability>& unavailability);
Decoded<std::string, std::optional<v1::Unavailability>> decodeUpdateUnavailability(
    const proto::UpdateUnavailability& in);

void encodeUpdateInverseOffer(proto::UpdateInverseOffer* out, const std::string& agent,
                              const std::string& framework, std::optional<bool> accepted,
                              const std::optional<v1::Filters>& filters);
Decoded<std::string, std::string, std::optional<bool>, std::optional<v1::Filters>>
decodeUpdateInverseOffer(const proto::UpdateInverseOffer& in);

void encodeUpdateAllocation(proto::UpdateAllocation* out, const std::string& framework,
                            const std::string& agent, const std::string& role,
                            const Resources& offered,
                            const std::vector<ResourceConversion>& conversions);
Decoded<std::string, std::string, std::string, Resources, std::vector<ResourceConversion>>
decodeUpdateAllocation(const proto::UpdateAllocation& in);

void encodeUpdateAvailable(proto::UpdateAvailable* out, const std::string& agent,
                           const std::vector<ResourceConversion>& conversions);
Decoded<std::string, std::vector<ResourceConversion>> decodeUpdateAvailable(
    const proto::UpdateAvailable& in);

void encodeRecoverResources(proto::RecoverResources* out, const std::string& framework,
                            const std::string& agent, const std::string& role,
                            const Resources& resources, const std::optional<v1::Filters>& filters);
Decoded<std::string, std::string, std::string, Resources, std::optional<v1::Filters>>
decodeRecoverResources(const proto::RecoverResources& in);

void encodeSuppressOffers(proto::FrameworkRoles* out, const std::string& framework,
                          const std::set<std::string>& roles);
Decoded<std::string, std::set<std::string>> decodeSuppressOffers(const proto::FrameworkRoles& in);

void encodeReviveOffers(proto::FrameworkRoles* out, const std::string& framework,
                        const std::set<std::string>& roles);
Decoded<std::string, std::set<std::string>> decodeReviveOffers(const proto::FrameworkRoles& in);

void encodeUpdateQuota(proto::UpdateQuota* out, const std::string& role, const Quota& quota);
Decoded<std::string, Quota> decodeUpdateQuota(const proto::UpdateQuota& in);

void encodeUpdateWeights(proto::UpdateWeights* out, const std::map<std::string, double>& weights);
Decoded<std::map<std::string, double>> decodeUpdateWeights(const proto::UpdateWeights& in);

void encodePause(proto::Nothing* out);
Decoded<> decodePause(const proto::Nothing& in);

void encodeResume(proto::Nothing* out);
Decoded<> decodeResume(const proto::Nothing& in);

void encodePlacementEvent(proto::Placement* out, const std::string& agent, const std::string& role,
                          PlacementEvent event, Time startedAt);
Decoded<std::string, std::string, PlacementEvent, Time> decodePlacementEvent(
    const proto::Placement& in);

// allocate() and allocate(agents) share the record; some_agents tells which one was made.
void encodeAllocate(proto::Allocate* out);
void encodeAllocate(proto::Allocate* out, const std::set<std::string>& agents);
Result<std::variant<std::tuple<>, std::tuple<std::set<std::string>>>> decodeAllocate(
    const proto::Allocate& in);

void encodeExplainDecisions(proto::ExplainDecisions* out, const std::string& framework,
                            const std::optional<std::string>& agent);
Decoded<std::string, std::optional<std::string>> decodeExplainDecisions(
    const proto::ExplainDecisions& in);

}  // namespace harvest::trace
