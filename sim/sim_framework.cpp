#include "sim/sim_framework.h"

#include <glog/logging.h>

#include <algorithm>
#include <optional>

namespace harvest::sim {
namespace {

// Takes a task's quantities out of `offered`, reserved entries first; nullopt if they do not fit.
std::optional<Resources> carve(Resources& offered, const Quantities& task) {
  Resources taken;
  for (const auto& want : task) {
    Scalar needed = want.second;
    for (const auto& entry : offered.scalars()) {
      if (entry.key.kind != want.first || needed.isZero()) continue;
      const Scalar take = std::min(needed, entry.amount);
      taken.addScalar(entry.key, take);
      needed -= take;
    }
    for (const auto& entry : offered.ranges()) {
      if (entry.key.kind != want.first || needed.isZero()) continue;
      uint64_t values = static_cast<uint64_t>(needed.milli() / Scalar::kScale);
      RangeSet part;
      for (const Interval& interval : entry.ranges.intervals()) {
        if (values == 0) break;
        const uint64_t length = std::min(values, interval.end - interval.begin + 1);
        part.add({interval.begin, interval.begin + length - 1});
        values -= length;
      }
      taken.addRanges(entry.key, part);
      needed -= Scalar::fromUnits(static_cast<int64_t>(part.count()));
    }
    if (needed.isPositive()) return std::nullopt;
  }
  offered -= taken;
  return taken;
}

}  // namespace

SimFramework::SimFramework(const ScenarioFramework& spec, Master& master, uint64_t seed,
                           uint64_t& retried, Locality& locality)
    : spec_(spec),
      taskQuantities_(spec.taskResources.quantities()),
      master_(&master),
      random_(seed),
      retried_(retried),
      locality_(&locality) {
  filters_.set_refuse_seconds(spec_.spec.workload().refuse_seconds());
}

void SimFramework::start() {
  v1::FrameworkInfo info = frameworkInfo();
  Result<std::string> id = master_->subscribe(info, this);
  if (!id.ok()) {
    LOG(ERROR) << "framework " << spec_.spec.name() << ": " << id.message();
    return;
  }
  id_ = *id;
  active_ = true;
  arrive();
}

void SimFramework::stop() {
  if (!active_) return;
  active_ = false;
  pending_.clear();
  (void)master_->teardown(id_);
}

void SimFramework::followMaster(Master& next, Locality& locality) {
  master_ = &next;
  locality_ = &locality;
  if (!active_) return;
  v1::FrameworkInfo info = frameworkInfo();
  info.mutable_id()->set_value(id_);
  Result<std::string> id = master_->subscribe(info, this);
  LOG_IF(ERROR, !id.ok()) << "framework " << spec_.spec.name() << " failover: " << id.message();
}

v1::FrameworkInfo SimFramework::frameworkInfo() const {
  v1::FrameworkInfo info;
  info.set_user("harness");
  info.set_name(spec_.spec.name());
  for (const std::string& role : spec_.spec.roles()) info.add_roles(role);
  if (spec_.spec.roles_size() > 1)
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::MULTI_ROLE);
  if (spec_.spec.revocable()) {
    info.add_capabilities()->set_type(v1::FrameworkInfo::Capability::REVOCABLE_RESOURCES);
  }
  return info;
}

void SimFramework::offers(const std::vector<Offer>& batch) {
  // Like a placement-aware scheduler, relaunches go to agents they vacated when such an
  // agent is among the offers (this helps with host affinity off as much as on).
  std::vector<const Offer*> offers;
  offers.reserve(batch.size());
  for (const Offer& offer : batch) offers.push_back(&offer);
  std::stable_partition(offers.begin(), offers.end(),
                        [this](const Offer* offer) { return vacated_.count(offer->agent) > 0; });
  const Duration delay = seconds(spec_.spec.workload().response_delay_seconds());
  // With a delay, one timer answers the batch: one per offer would all come due at the same
  // time, one after the other with nothing between them, so the answers keep their order.
  std::vector<Answer> answers;
  if (delay > Duration::zero()) answers.reserve(offers.size());
  for (const Offer* offer : offers) {
    Answer answer{std::vector<std::string>(1, offer->id), launchesFor(*offer)};
    if (delay > Duration::zero()) {
      answers.push_back(std::move(answer));
    } else {
      // At once, before the next offer is carved: an answer may change what is pending
      // (a refused launch is retried).
      respond(answer);
    }
  }
  if (!answers.empty()) {
    master_->loop().after(delay, [this, answers = std::move(answers)] {
      for (const Answer& answer : answers) respond(answer);
    });
  }
}

std::vector<TaskLaunch> SimFramework::launchesFor(const Offer& offer) {
  const bool usable =
      offer.revocability == Revocability::kRegular || spec_.spec.workload().use_revocable();
  std::vector<TaskLaunch> launches;
  if (!usable || !active_ || pending_.empty()) return launches;
  // Most offers are declined: what is offered is copied only when tasks may be carved from it.
  Resources left = offer.resources;
  while (active_ && !pending_.empty()) {
    std::optional<Resources> taken = carve(left, taskQuantities_);
    if (!taken) break;
    const PendingTask& task = pending_.front();
    launches.push_back({task.name, *taken, task.duration});
    if (!task.vacated.empty()) countRelaunch(task.vacated, offer.agent);
    pending_.pop_front();
  }
  return launches;
}

// Every agent update is acknowledged, as a framework does; the master's own (refused
// launches) need no acknowledgement.
void SimFramework::updateToAcknowledge(const TaskStatus& status, const std::string& uuid) {
  (void)master_->acknowledge(id_, status.task, uuid);
  update(status);
}

void SimFramework::update(const TaskStatus& status) {
  if (status.state == TaskState::kRunning || status.state == TaskState::kStaging) return;
  if (status.state == TaskState::kFinished && active_ &&
      spec_.spec.workload().relaunch_finished()) {
    vacated_.insert(status.agent);
    pending_.push_front(
        {spec_.spec.name() + "-" + std::to_string(nextTask_++), durationOf(), status.agent});
  }
  const bool lost = status.state == TaskState::kLost || status.state == TaskState::kGone ||
                    status.state == TaskState::kError;
  if (lost && active_ && spec_.spec.workload().retry_lost()) {
    pending_.push_front({status.task + "r", durationOf(), ""});
    ++retried_;
  }
}

void SimFramework::respond(const Answer& answer) {
  if (id_.empty()) return;
  if (answer.launches.empty()) {
    (void)master_->decline(id_, answer.offers, filters_);
  } else {
    (void)master_->accept(id_, answer.offers, answer.launches, filters_);
  }
}

// A relaunch returns when it lands on any agent this framework vacated and has not taken
// back yet; otherwise its predecessor's agent stops counting as vacated.
void SimFramework::countRelaunch(const std::string& predecessorAgent, const std::string& agent) {
  ++locality_->relaunches;
  if (auto it = vacated_.find(agent); it != vacated_.end()) {
    ++locality_->returned;
    vacated_.erase(it);
  } else if (auto own = vacated_.find(predecessorAgent); own != vacated_.end()) {
    vacated_.erase(own);
  }
}

Duration SimFramework::durationOf() {
  const auto& w = spec_.spec.workload();
  double factor = 1.0;
  if (w.duration_jitter() > 0) {
    factor += w.duration_jitter() * std::uniform_real_distribution<double>(-1.0, 1.0)(random_);
  }
  return seconds(w.task_duration_seconds() * factor);
}

void SimFramework::arrive() {
  if (!active_) return;
  const auto& w = spec_.spec.workload();
  for (uint32_t i = 0; i < w.burst() && pending_.size() < w.max_pending(); ++i) {
    pending_.push_back({spec_.spec.name() + "-" + std::to_string(nextTask_++), durationOf(), ""});
  }
  master_->loop().after(seconds(w.task_interval_seconds()), [this] { arrive(); });
}

}  // namespace harvest::sim
