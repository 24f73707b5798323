#include "trace/call_codec.h"

#include <utility>

namespace harvest::trace {

namespace {

void encodeStrings(const std::set<std::string>& strings, RepeatedPtrField<std::string>* out) {
  for (const std::string& s : strings) *out->Add() = s;
}

std::set<std::string> decodeStrings(const RepeatedPtrField<std::string>& strings) {
  return std::set<std::string>(strings.begin(), strings.end());
}

FrameworkOptions frameworkOptions(const RepeatedPtrField<std::string>& suppressedRoles,
                                  const v1::scheduler::OfferConstraints& constraints) {
  FrameworkOptions options(decodeStrings(suppressedRoles));
  options.offerConstraints = constraints;
  return options;
}

// `limit` is null exactly when the quota has none, so an unlimited quota has no limit field.
void encodeQuota(const Quota& quota, RepeatedPtrField<proto::Amount>* guarantee,
                 proto::Limits* limit) {
  encode(quota.guarantee, guarantee);
  if (quota.limit) encode(*quota.limit, limit);
}

Result<Quota> decodeQuota(const RepeatedPtrField<proto::Amount>& guarantee, bool hasLimit,
                          const proto::Limits& limit) {
  Result<Quantities> amounts = decodeQuantities(guarantee);
  if (!amounts.ok()) return amounts.status();
  Quota quota;
  quota.guarantee = std::move(amounts).value();
  if (hasLimit) {
    Result<ResourceLimits> limits = decodeLimits(limit);
    if (!limits.ok()) return limits.status();
    quota.limit = std::move(limits).value();
  }
  return quota;
}

template <typename Message>
std::optional<Message> optionalOf(bool has, const Message& message) {
  return has ? std::optional<Message>(message) : std::nullopt;
}

Result<std::optional<Resources>> decodeOptionalResources(bool has, const proto::ResourceList& in) {
  if (!has) return std::optional<Resources>();
  Result<Resources> resources = decodeResources(in.resources());
  if (!resources.ok()) return resources.status();
  return std::optional<Resources>(std::move(resources).value());
}

}  // namespace

void encodeRecover(proto::Recover* out, int expectedAgents,
                   const std::map<std::string, Quota>& quotas) {
  out->set_expected_agents(expectedAgents);
  for (const auto& [role, quota] : quotas) {
    proto::Recover::RoleQuota* entry = out->add_quotas();
    entry->set_role(role);
    encodeQuota(quota, entry->mutable_guarantee(), quota.limit ? entry->mutable_limit() : nullptr);
  }
}

Decoded<int, std::map<std::string, Quota>> decodeRecover(const proto::Recover& in) {
  std::map<std::string, Quota> quotas;
  for (const auto& entry : in.quotas()) {
    Result<Quota> quota = decodeQuota(entry.guarantee(), entry.has_limit(), entry.limit());
    if (!quota.ok()) return quota.status();
    quotas[entry.role()] = std::move(quota).value();
  }
  return std::tuple(in.expected_agents(), std::move(quotas));
}

void encodeAddFramework(proto::AddFramework* out, const std::string& framework,
                        const v1::FrameworkInfo& info,
                        const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                        const FrameworkOptions& options) {
  out->set_framework(framework);
  *out->mutable_info() = info;
  encode(usedByAgent, out->mutable_used_by_agent());
  out->set_active(active);
  encodeStrings(options.suppressedRoles, out->mutable_suppressed_roles());
  if (!options.offerConstraints.role_constraints().empty()) {
    *out->mutable_offer_constraints() = options.offerConstraints;
  }
}

Decoded<std::string, v1::FrameworkInfo, std::map<std::string, ResourcesByRole>, bool,
        FrameworkOptions>
decodeAddFramework(const proto::AddFramework& in) {
  Result<std::map<std::string, ResourcesByRole>> used = decodeHoldings(in.used_by_agent());
  if (!used.ok()) return used.status();
  return std::tuple(in.framework(), in.info(), std::move(used).value(), in.active(),
                    frameworkOptions(in.suppressed_roles(), in.offer_constraints()));
}

void encodeRemoveFramework(std::string* out, const std::string& framework) {
  *out = framework;
}

Decoded<std::string> decodeRemoveFramework(const std::string& in) {
  return std::tuple(in);
}

void encodeActivateFramework(std::string* out, const std::string& framework) {
  *out = framework;
}

Decoded<std::string> decodeActivateFramework(const std::string& in) {
  return std::tuple(in);
}

void encodeDeactivateFramework(std::string* out, const std::string& framework) {
  *out = framework;
}

Decoded<std::string> decodeDeactivateFramework(const std::string& in) {
  return std::tuple(in);
}

void encodeUpdateFramework(proto::UpdateFramework* out, const std::string& framework,
                           const v1::FrameworkInfo& info, const FrameworkOptions& options) {
  out->set_framework(framework);
  *out->mutable_info() = info;
  encodeStrings(options.suppressedRoles, out->mutable_suppressed_roles());
  if (!options.offerConstraints.role_constraints().empty()) {
    *out->mutable_offer_constraints() = options.offerConstraints;
  }
}

Decoded<std::string, v1::FrameworkInfo, FrameworkOptions> decodeUpdateFramework(
    const proto::UpdateFramework& in) {
  return std::tuple(in.framework(), in.info(),
                    frameworkOptions(in.suppressed_roles(), in.offer_constraints()));
}

void encodeAddAgent(proto::AddAgent* out, const std::string& agent, const v1::AgentInfo& info,
                    const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                    const std::map<std::string, ResourcesByRole>& usedByFramework) {
  out->set_agent(agent);
  *out->mutable_info() = info;
  if (unavailability) *out->mutable_unavailability() = *unavailability;
  encode(total, out->mutable_total());
  encode(usedByFramework, out->mutable_used_by_framework());
}

Decoded<std::string, v1::AgentInfo, std::optional<v1::Unavailability>, Resources,
        std::map<std::string, ResourcesByRole>>
decodeAddAgent(const proto::AddAgent& in) {
  Result<Resources> total = decodeResources(in.total());
  if (!total.ok()) return total.status();
  Result<std::map<std::string, ResourcesByRole>> used = decodeHoldings(in.used_by_framework());
  if (!used.ok()) return used.status();
  return std::tuple(in.agent(), in.info(), optionalOf(in.has_unavailability(), in.unavailability()),
                    std::move(total).value(), std::move(used).value());
}

void encodeRemoveAgent(std::string* out, const std::string& agent) {
  *out = agent;
}

Decoded<std::string> decodeRemoveAgent(const std::string& in) {
  return std::tuple(in);
}

void encodeUpdateAgent(proto::UpdateAgent* out, const std::string& agent, const v1::AgentInfo& info,
                       const std::optional<Resources>& total,
                       const std::optional<Resources>& oversubscribed) {
  out->set_agent(agent);
  *out->mutable_info() = info;
  if (total) encode(*total, out->mutable_total()->mutable_resources());
  if (oversubscribed) encode(*oversubscribed, out->mutable_oversubscribed()->mutable_resources());
}

Decoded<std::string, v1::AgentInfo, std::optional<Resources>, std::optional<Resources>>
decodeUpdateAgent(const proto::UpdateAgent& in) {
  Result<std::optional<Resources>> total = decodeOptionalResources(in.has_total(), in.total());
  if (!total.ok()) return total.status();
  Result<std::optional<Resources>> oversubscribed =
      decodeOptionalResources(in.has_oversubscribed(), in.oversubscribed());
  if (!oversubscribed.ok()) return oversubscribed.status();
  return std::tuple(in.agent(), in.info(), std::move(total).value(),
                    std::move(oversubscribed).value());
}

void encodeActivateAgent(std::string* out, const std::string& agent) {
  *out = agent;
}

Decoded<std::string> decodeActivateAgent(const std::string& in) {
  return std::tuple(in);
}

void encodeDeactivateAgent(std::string* out, const std::string& agent) {
  *out = agent;
}

Decoded<std::string> decodeDeactivateAgent(const std::string& in) {
  return std::tuple(in);
}

void encodeUpdateUnavailability(proto::UpdateUnavailability* out, const std::string& agent,
                                const std::optional<v1::Unavailability>& unavailability) {
  out->set_agent(agent);
  if (unavailability) *out->mutable_unavailability() = *unavailability;
}

Decoded<std::string, std::optional<v1::Unavailability>> decodeUpdateUnavailability(
    const proto::UpdateUnavailability& in) {
  return std::tuple(in.agent(), optionalOf(in.has_unavailability(), in.unavailability()));
}

void encodeUpdateInverseOffer(proto::UpdateInverseOffer* out, const std::string& agent,
                              const std::string& framework, std::optional<bool> accepted,
                              const std::optional<v1::Filters>& filters) {
  out->set_agent(agent);
  out->set_framework(framework);
  if (accepted) out->set_accepted(*accepted);
  if (filters) *out->mutable_filters() = *filters;
}

Decoded<std::string, std::string, std::optional<bool>, std::optional<v1::Filters>>
decodeUpdateInverseOffer(const proto::UpdateInverseOffer& in) {
  return std::tuple(in.agent(), in.framework(), optionalOf(in.has_accepted(), in.accepted()),
                    optionalOf(in.has_filters(), in.filters()));
}

void encodeUpdateAllocation(proto::UpdateAllocation* out, const std::string& framework,
                            const std::string& agent, const std::string& role,
                            const Resources& offered,
                            const std::vector<ResourceConversion>& conversions) {
  out->set_framework(framework);
  out->set_agent(agent);
  out->set_role(role);
  encode(offered, out->mutable_offered());
  encode(conversions, out->mutable_conversions());
}

Decoded<std::string, std::string, std::string, Resources, std::vector<ResourceConversion>>
decodeUpdateAllocation(const proto::UpdateAllocation& in) {
  Result<Resources> offered = decodeResources(in.offered());
  if (!offered.ok()) return offered.status();
  Result<std::vector<ResourceConversion>> conversions = decodeConversions(in.conversions());
  if (!conversions.ok()) return conversions.status();
  return std::tuple(in.framework(), in.agent(), in.role(), std::move(offered).value(),
                    std::move(conversions).value());
}

void encodeUpdateAvailable(proto::UpdateAvailable* out, const std::string& agent,
                           const std::vector<ResourceConversion>& conversions) {
  out->set_agent(agent);
  encode(conversions, out->mutable_conversions());
}

Decoded<std::string, std::vector<ResourceConversion>> decodeUpdateAvailable(
    const proto::UpdateAvailable& in) {
  Result<std::vector<ResourceConversion>> conversions = decodeConversions(in.conversions());
  if (!conversions.ok()) return conversions.status();
  return std::tuple(in.agent(), std::move(conversions).value());
}

void encodeRecoverResources(proto::RecoverResources* out, const std::string& framework,
                            const std::string& agent, const std::string& role,
                            const Resources& resources, const std::optional<v1::Filters>& filters) {
  out->set_framework(framework);
  out->set_agent(agent);
  out->set_role(role);
  encode(resources, out->mutable_resources());
  if (filters) *out->mutable_filters() = *filters;
}

Decoded<std::string, std::string, std::string, Resources, std::optional<v1::Filters>>
decodeRecoverResources(const proto::RecoverResources& in) {
  Result<Resources> resources = decodeResources(in.resources());
  if (!resources.ok()) return resources.status();
  return std::tuple(in.framework(), in.agent(), in.role(), std::move(resources).value(),
                    optionalOf(in.has_filters(), in.filters()));
}

void encodeSuppressOffers(proto::FrameworkRoles* out, const std::string& framework,
                          const std::set<std::string>& roles) {
  out->set_framework(framework);
  encodeStrings(roles, out->mutable_roles());
}

Decoded<std::string, std::set<std::string>> decodeSuppressOffers(const proto::FrameworkRoles& in) {
  return std::tuple(in.framework(), decodeStrings(in.roles()));
}

void encodeReviveOffers(proto::FrameworkRoles* out, const std::string& framework,
                        const std::set<std::string>& roles) {
  out->set_framework(framework);
  encodeStrings(roles, out->mutable_roles());
}

Decoded<std::string, std::set<std::string>> decodeReviveOffers(const proto::FrameworkRoles& in) {
  return std::tuple(in.framework(), decodeStrings(in.roles()));
}

void encodeUpdateQuota(proto::UpdateQuota* out, const std::string& role, const Quota& quota) {
  out->set_role(role);
  encodeQuota(quota, out->mutable_guarantee(), quota.limit ? out->mutable_limit() : nullptr);
}

Decoded<std::string, Quota> decodeUpdateQuota(const proto::UpdateQuota& in) {
  Result<Quota> quota = decodeQuota(in.guarantee(), in.has_limit(), in.limit());
  if (!quota.ok()) return quota.status();
  return std::tuple(in.role(), std::move(quota).value());
}

void encodeUpdateWeights(proto::UpdateWeights* out, const std::map<std::string, double>& weights) {
  for (const auto& [role, weight] : weights) {
    proto::RoleWeight* entry = out->add_weights();
    entry->set_role(role);
    entry->set_weight(weight);
  }
}

Decoded<std::map<std::string, double>> decodeUpdateWeights(const proto::UpdateWeights& in) {
  std::map<std::string, double> weights;
  for (const proto::RoleWeight& entry : in.weights()) weights[entry.role()] = entry.weight();
  return std::tuple(std::move(weights));
}

void encodePause(proto::Nothing* /*out*/) {}

Decoded<> decodePause(const proto::Nothing& /*in*/) {
  return std::tuple();
}

void encodeResume(proto::Nothing* /*out*/) {}

Decoded<> decodeResume(const proto::Nothing& /*in*/) {
  return std::tuple();
}

void encodePlacementEvent(proto::Placement* out, const std::string& agent, const std::string& role,
                          PlacementEvent event, Time startedAt) {
  out->set_agent(agent);
  out->set_role(role);
  out->set_event(static_cast<uint32_t>(event));
  out->set_started_at(startedAt.nanos());
}

Decoded<std::string, std::string, PlacementEvent, Time> decodePlacementEvent(
    const proto::Placement& in) {
  if (in.event() > static_cast<uint32_t>(PlacementEvent::kTaskRecovered)) {
    return Status::corruption("unknown placement event " + std::to_string(in.event()));
  }
  return std::tuple(in.agent(), in.role(), static_cast<PlacementEvent>(in.event()),
                    Time::fromNanos(in.started_at()));
}

void encodeAllocate(proto::Allocate* /*out*/) {}

void encodeAllocate(proto::Allocate* out, const std::set<std::string>& agents) {
  out->set_some_agents(true);
  encodeStrings(agents, out->mutable_agents());
}

Result<std::variant<std::tuple<>, std::tuple<std::set<std::string>>>> decodeAllocate(
    const proto::Allocate& in) {
  using Overload = std::variant<std::tuple<>, std::tuple<std::set<std::string>>>;
  if (!in.some_agents()) return Overload(std::tuple());
  return Overload(std::tuple(decodeStrings(in.agents())));
}

void encodeExplainDecisions(proto::ExplainDecisions* out, const std::string& framework,
                            const std::optional<std::string>& agent) {
  out->set_framework(framework);
  if (agent) out->set_agent(*agent);
}

Decoded<std::string, std::optional<std::string>> decodeExplainDecisions(
    const proto::ExplainDecisions& in) {
  return std::tuple(in.framework(), optionalOf(in.has_agent(), in.agent()));
}

}  // namespace harvest::trace
