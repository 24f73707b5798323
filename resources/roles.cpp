#include "resources/roles.h"

#include <string>

namespace harvest::roles {

Status validate(std::string_view role) {
  const std::string quoted = "role '" + std::string(role) + "'";
  if (role.empty()) return Status::invalidArgument("role name is empty");
  if (role == kDefaultRole) return Status();
  if (role.front() == '/' || role.back() == '/') {
    return Status::invalidArgument(quoted + " must not start or end with '/'");
  }
  size_t start = 0;
  while (start <= role.size()) {
    size_t slash = role.find('/', start);
    if (slash == std::string_view::npos) slash = role.size();
    const std::string_view component = role.substr(start, slash - start);
    if (component.empty())
      return Status::invalidArgument(quoted + " has an empty component ('//')");
    if (component == "." || component == "..") {
      return Status::invalidArgument(quoted + " has a '.' or '..' component");
    }
    if (component == "*") return Status::invalidArgument(quoted + " has a '*' component");
    if (component.front() == '-') {
      return Status::invalidArgument(quoted + " has a component starting with '-'");
    }
    for (char c : component) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte <= 0x20 || byte == 0x7f || c == '\\') {
        return Status::invalidArgument(quoted +
                                       " contains whitespace, a backslash or a control character");
      }
    }
    start = slash + 1;
  }
  return Status();
}

bool isWithin(std::string_view role, std::string_view ancestor) {
  if (role.size() < ancestor.size() || role.substr(0, ancestor.size()) != ancestor) return false;
  return role.size() == ancestor.size() || role[ancestor.size()] == '/';
}

}  // namespace harvest::roles
