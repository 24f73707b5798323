// Compiled only by Structure.AForbiddenIncludeFailsToCompile, which expects this include to
// fail: harvest_agent_runtime does not link the master, so its headers are not visible.
#include "master/master.h"
