// RecordingAllocator: an Allocator that forwards every call to the allocator it wraps and
// records the call in a trace (harvest-master --allocator_trace; harvest-replay reads it).
//
// Each record holds the call's arguments, the clock's time at the call, the Status the call
// returned and every callback (offer, rescind, inverse offer) the allocator made during it.
// The allocator it wraps sees the clock stand still at that time for the whole call, so a
// replay that sets the clock to the recorded time reproduces the call exactly whatever clock
// the master runs on.
//
// Recording never fails a call: once the trace cannot be written (see TraceWriter) the calls
// still go through, unrecorded. metrics() is not recorded: it changes nothing.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "allocator/allocator.h"
#include "trace/trace_writer.h"

namespace harvest::trace {

// The module the wrapped allocator came from, for the trace's header.
struct RecordedModule {
  std::string name;
  std::string library;  // Empty: the built-in module.
  std::map<std::string, std::string> parameters;
};

class RecordingAllocator final : public Allocator {
 public:
  RecordingAllocator(std::unique_ptr<Allocator> allocator, std::unique_ptr<TraceWriter> writer,
                     RecordedModule module);
  ~RecordingAllocator() override;

  Status initialize(AllocatorOptions options, AllocatorCallbacks callbacks) override;
  Status recover(int expectedAgents, const std::map<std::string, Quota>& quotas) override;
  Status addFramework(const std::string& framework, const v1::FrameworkInfo& info,
                      const std::map<std::string, ResourcesByRole>& usedByAgent, bool active,
                      const std::set<std::string>& suppressedRoles) override;
  Status removeFramework(const std::string& framework) override;
  Status activateFramework(const std::string& framework) override;
  Status deactivateFramework(const std::string& framework) override;
  Status updateFramework(const std::string& framework, const v1::FrameworkInfo& info,
                         const std::set<std::string>& suppressedRoles) override;
  Status addAgent(const std::string& agent, const v1::AgentInfo& info,
                  const std::optional<v1::Unavailability>& unavailability, const Resources& total,
                  const std::map<std::string, ResourcesByRole>& usedByFramework) override;
  Status removeAgent(const std::string& agent) override;
  Status updateAgent(const std::string& agent, const v1::AgentInfo& info,
                     const std::optional<Resources>& total,
                     const std::optional<Resources>& oversubscribed) override;
  Status activateAgent(const std::string& agent) override;
  Status deactivateAgent(const std::string& agent) override;
  Status updateUnavailability(const std::string& agent,
                              const std::optional<v1::Unavailability>& unavailability) override;
  Status updateInverseOffer(const std::string& agent, const std::string& framework,
                            std::optional<bool> accepted,
                            const std::optional<v1::Filters>& filters) override;
  Status updateAllocation(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& offered,
                          const std::vector<ResourceConversion>& conversions) override;
  Status updateAvailable(const std::string& agent,
                         const std::vector<ResourceConversion>& conversions) override;
  Status recoverResources(const std::string& framework, const std::string& agent,
                          const std::string& role, const Resources& resources,
                          const std::optional<v1::Filters>& filters) override;
  Status suppressOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status reviveOffers(const std::string& framework, const std::set<std::string>& roles) override;
  Status updateQuota(const std::string& role, const Quota& quota) override;
  Status updateWeights(const std::map<std::string, double>& weights) override;
  void pause() override;
  void resume() override;
  Status placementEvent(const std::string& agent, const std::string& role, PlacementEvent event,
                        TimeNanos startedAt) override;
  void allocate() override;
  void allocate(const std::set<std::string>& agents) override;
  std::map<std::string, double> metrics() const override;
  Result<DecisionExplanation> explainDecisions(const std::string& framework,
                                               const std::optional<std::string>& agent) override;

 private:
  using Record = v1::trace::TraceRecord;
  // Fills the record's call with `describe`, makes the call with the clock held at its time,
  // and appends the record with the outcome and the callbacks made meanwhile.
  template <typename Describe, typename Call>
  Status record(Describe&& describe, Call&& call);
  bool recording() const;

  // Declared before `allocator_`, which may read the clock while it is destroyed.
  std::function<TimeNanos()> clock_;
  TimeNanos callTime_ = 0;
  bool inCall_ = false;
  bool stopped_ = false;
  Record current_;
  std::unique_ptr<TraceWriter> writer_;
  RecordedModule module_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace harvest::trace
