#pragma once

#include <string>

namespace kforge::runner {

// Network isolation by namespaces: a new user namespace (so no privilege is needed) owning a new
// network namespace, which has only a loopback interface that is down. Many containers forbid user
// namespaces; a privileged supervisor then still gets the network namespace alone. The id maps are
// formatted in the supervisor; the forked child enters the namespaces with raw system calls.
class NamespaceIsolation {
 public:
  struct Outcome {
    bool user_namespace = false;
    bool network_namespace = false;
    int user_error = 0;     // errno of unshare(CLONE_NEWUSER | CLONE_NEWNET)
    int network_error = 0;  // errno of unshare(CLONE_NEWNET) alone, the fallback
    int map_error = 0;      // errno of writing the uid/gid maps of the new user namespace
  };

  NamespaceIsolation();

  // Async-signal-safe. The child keeps its own uid and gid inside the user namespace.
  Outcome enter() const noexcept;

  static std::string describe(const Outcome& outcome);

 private:
  std::string uid_map_;
  std::string gid_map_;
};

}  // namespace kforge::runner
