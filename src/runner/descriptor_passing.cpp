#include "runner/descriptor_passing.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace kforge::runner {

ssize_t send_with_descriptors(int socket_fd, std::string_view bytes, std::span<const int> fds) {
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  std::string copy(bytes);  // iovec wants a mutable pointer; sendmsg never writes it
  iovec data{copy.data(), copy.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  ssize_t sent = -1;
  while ((sent = sendmsg(socket_fd, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return sent;
}

}  // namespace kforge::runner
