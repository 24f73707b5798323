// An agent's attributes as an operator writes them (Mesos's agent --attributes):
// "rack:r1;slots:4;ports:[31000-32000,33000-33100]". A value that is a number is a scalar, one
// in brackets is ranges, anything else is text. Names are unique.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "protos/mesos.pb.h"

namespace harvest::agent {

Result<std::vector<v1::Attribute>> parseAttributes(const std::string& text);

}  // namespace harvest::agent
