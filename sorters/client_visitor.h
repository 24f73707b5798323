// ClientVisitor: what Sorter::visitInOrder calls for each active client, as a non-owning
// reference to the caller's callable.
//
// The allocator walks the framework sorter of every role on every agent it visits, calling
// the visitor once per framework. A std::function there costs a wrapper object per walk and
// two indirect calls per client (its invoker, then the callable); this costs one indirect
// call and never allocates. Like std::string_view, it must not outlive what it refers to:
// visitInOrder takes it by value and drops it when it returns.
#pragma once

#include <memory>
#include <type_traits>

#include "sorters/client_id.h"

namespace harvest {

class ClientVisitor {
 public:
  // Implicit, as std::function's: callers pass a lambda.
  template <typename Visit>
  requires(!std::is_same_v<std::remove_cvref_t<Visit>, ClientVisitor> &&
           std::is_invocable_r_v<bool, Visit&, ClientId>)
      ClientVisitor(Visit&& visit)  // NOLINT(google-explicit-constructor)
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(visit)))),
        call_([](void* callable, ClientId client) -> bool {
          return (*static_cast<std::remove_reference_t<Visit>*>(callable))(client);
        }) {}

  bool operator()(ClientId client) const { return call_(callable_, client); }

 private:
  void* callable_;
  bool (*call_)(void*, ClientId);
};

}  // namespace harvest
