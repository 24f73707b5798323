// The HTTP status that answers a refusal of each kind, the same on every endpoint of the
// master, so a client reads one meaning into one code whichever API it calls. An endpoint
// departs from it only where its protocol names another code for that very case (Mesos's
// documented answers; agent_api.proto for the agent endpoints), and says so where it does.
#pragma once

#include "common/status.h"

namespace harvest::master {

int httpStatus(StatusCode code);

}  // namespace harvest::master
