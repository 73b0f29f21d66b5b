#include "serve/random_hex.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kforge::serve {

std::string random_hex(std::size_t digits) {
  std::vector<unsigned char> bytes((digits + 1) / 2);
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const auto got = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got > 0) {
      filled += static_cast<std::size_t>(got);
    } else if (errno != EINTR) {
      throw std::runtime_error(fmt::format("cannot draw random bytes: {}", std::strerror(errno)));
    }
  }
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    text += fmt::format("{:02x}", byte);
  }
  text.resize(digits);
  return text;
}

}  // namespace kforge::serve
