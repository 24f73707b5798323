#include "tools/tracegen/workload.h"

#include <memory>
#include <random>
#include <vector>

#include "master/master.h"
#include "resources/parse.h"
#include "sim/simulated_agent.h"

namespace harvest::tracegen {

namespace {

using master::Master;
using master::Offer;
using master::TaskLaunch;
using master::TaskStatus;

// Truncated, not rounded as Duration::secondsDouble does: traces generated with a given seed
// stay what they were.
Duration seconds(double s) {
  return Duration::nanoseconds(static_cast<int64_t>(s * 1e9));
}

// Launches tasks of one size while it is below its target and the offer holds them; declines
// the rest of each offer for a while, and suppresses offers while at its target. Revocable
// offers are declined.
class Framework final : public master::Scheduler {
 public:
  Framework(Master* master, std::mt19937_64* random, std::string role, size_t index,
            WorkloadStats* stats)
      : master_(master), random_(random), role_(std::move(role)), stats_(stats) {
    const int cpus = 1 + static_cast<int>(index % 4);
    const std::string size = "cpus:" + std::to_string(cpus) + ";mem:" + std::to_string(cpus * 2048);
    task_ = parseResources(size).value();
    reservedTask_ = parseResources(size, role_).value();
    target_ = 60 + index % 60;
  }

  Status subscribe(const std::string& name) {
    v1::FrameworkInfo info;
    info.set_user("tracegen");
    info.set_name(name);
    info.add_roles(role_);
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
    Result<std::string> id = master_->subscribe(info, this);
    if (!id.ok()) return id.status();
    id_ = *id;
    return Status();
  }

  void offers(const std::vector<Offer>& offers) override {
    for (const Offer& offer : offers) {
      ++stats_->offers;
      std::vector<TaskLaunch> launches;
      Resources left = offer.resources;
      if (offer.revocability == Revocability::kRegular) {
        while (running_ + launches.size() < target_) {
          const Resources* fits = left.contains(reservedTask_) ? &reservedTask_
                                  : left.contains(task_)       ? &task_
                                                               : nullptr;
          if (fits == nullptr) break;
          std::uniform_real_distribution<double> duration(30, 600);
          launches.push_back(TaskLaunch{id_ + "-t" + std::to_string(nextTask_++), *fits,
                                        seconds(duration(*random_))});
          left -= *fits;
        }
      }
      std::uniform_real_distribution<double> refuse(2, 20);
      v1::Filters filters;
      filters.set_refuse_seconds(refuse(*random_));
      if (launches.empty()) {
        ++stats_->declines;
        (void)master_->decline(id_, {offer.id}, filters);
      } else {
        running_ += launches.size();
        stats_->tasksLaunched += launches.size();
        (void)master_->accept(id_, {offer.id}, launches, filters);
      }
    }
    // As well-behaved Mesos frameworks do: no offers while there is nothing to launch.
    if (running_ >= target_ && !suppressed_) {
      suppressed_ = true;
      (void)master_->suppress(id_, {});
    }
  }

  void updateToAcknowledge(const TaskStatus& status, const std::string& uuid) override {
    if (master::isTerminal(status.state) && running_ > 0) {
      --running_;
      ++stats_->tasksFinished;
      if (suppressed_) {
        suppressed_ = false;
        (void)master_->revive(id_, {});
      }
    }
    (void)master_->acknowledge(id_, status.task, uuid);
  }

 private:
  Master* master_;
  std::mt19937_64* random_;
  std::string role_;
  WorkloadStats* stats_;
  Resources task_, reservedTask_;  // One task, unreserved or on the role's reservation.
  size_t target_ = 0;
  size_t running_ = 0;
  bool suppressed_ = false;
  uint64_t nextTask_ = 0;
  std::string id_;
};

}  // namespace

Result<WorkloadStats> runWorkload(const WorkloadOptions& options) {
  EventLoop loop;
  master::MasterOptions masterOptions;
  masterOptions.allocationInterval = options.allocationInterval;
  masterOptions.seed = options.seed;
  masterOptions.moduleParameters = options.moduleParameters;
  masterOptions.allocatorTrace = options.trace;
  Result<std::unique_ptr<Master>> created = Master::create(masterOptions, &loop);
  if (!created.ok()) return created.status();
  Master& master = **created;

  const size_t roles = std::max<size_t>(options.roles, 1);
  for (size_t i = 0; i < options.agents; ++i) {
    std::string text = "cpus:16;mem:32768";
    // Every fifth agent holds a reservation for one role, lent out when that role idles.
    if (i % 5 == 0) {
      const std::string role = "role-" + std::to_string((i / 5) % roles);
      text += ";cpus(" + role + "):8;mem(" + role + "):16384";
    }
    Result<Resources> total = parseResources(text);
    if (!total.ok()) return total.status();
    if (Status s = sim::addSimulatedAgent(master, "agent-" + std::to_string(i), *total); !s.ok()) {
      return s;
    }
  }
  std::mt19937_64 random(options.seed);
  WorkloadStats stats;
  std::vector<std::unique_ptr<Framework>> frameworks;
  for (size_t i = 0; i < options.frameworks; ++i) {
    frameworks.push_back(std::make_unique<Framework>(
        &master, &random, "role-" + std::to_string(i % roles), i, &stats));
    if (Status s = frameworks.back()->subscribe("fw-" + std::to_string(i)); !s.ok()) return s;
  }
  // Agents time out launches that waited too long for evictions only when ticked.
  std::function<void()> tick = [&] {
    master.tickAgents();
    loop.after(Duration::seconds(1), tick);
  };
  loop.after(Duration::seconds(1), tick);
  loop.runUntil(Time() + options.duration);
  stats.allocationCycles = master.stats().allocationCycles;
  return stats;
}

}  // namespace harvest::tracegen
