// harvest-master with `--zk`: a master that serves only while ZooKeeper elects it.
//
// Until elected it is a standby (StandbyServer on its port: redirects to the leader, no state,
// no offers). Once elected it recovers what the leader before it persisted, from ZooKeeper
// (`<path>/harvest_state`, fenced by its contender node; --work_dir is not used for it), and
// serves as NetworkMaster on the same port. The moment it stops leading, or its candidacy
// is lost (session expired), the process exits, as a Mesos master does: no code path can send
// an offer after that, and a supervisor restarts it as a fresh standby. ZooKeeper unreachable
// at start is reported and retried until it answers or the master is stopped.
#pragma once

#include <atomic>

#include "ha/zookeeper_url.h"
#include "master/network/network_master.h"

namespace harvest::master {

struct ElectionOptions {
  ha::ZooKeeperUrl url;
  // How long ZooKeeper keeps our candidacy without hearing from us (Mesos's --zk_session_timeout).
  Duration sessionTimeout = Duration::seconds(10);
  // Between attempts to reach ZooKeeper at start.
  Duration retryInterval = Duration::seconds(1);
};

// The exit status of a master that stopped leading or lost its candidacy.
inline constexpr int kLostLeadershipExitCode = 3;

// Runs until `stop` (returns 0) or a start failure (returns 1, with the reason on stderr).
// Exits the process with kLostLeadershipExitCode when leadership or candidacy is lost.
int serveWhenElected(const ElectionOptions& election, NetworkOptions network,
                     const MasterOptions& master, const std::atomic<bool>& stop);

}  // namespace harvest::master
