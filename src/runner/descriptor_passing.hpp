#pragma once

#include <sys/types.h>

#include <span>
#include <string_view>

namespace kforge::runner {

// Sends `bytes` on a Unix socket with `fds` attached (SCM_RIGHTS) in one sendmsg, retried on EINTR; what
// sendmsg returned (the bytes sent, possibly fewer than given, or -1).
ssize_t send_with_descriptors(int socket_fd, std::string_view bytes, std::span<const int> fds);

}  // namespace kforge::runner
