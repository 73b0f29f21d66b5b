#include "serve/service_token.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "serve/random_hex.hpp"

namespace kforge::serve {
namespace {

constexpr std::size_t kTokenBytes = 32;
constexpr std::string_view kScheme = "bearer";

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

// Constant-time comparison: the check must not leak how many leading characters matched.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    difference = static_cast<unsigned char>(
        difference | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
  }
  return difference == 0;
}

}  // namespace

std::string read_token_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw std::runtime_error(
        fmt::format("--token-file {}: cannot read it (the token goes on its first line)", file.string()));
  }
  const auto token = trimmed(line);
  if (token.empty()) {
    throw std::runtime_error(
        fmt::format("--token-file {}: the first line is empty; put the token there (any non-empty text "
                    "without spaces), or remove the file and kforge serve writes a new one",
                    file.string()));
  }
  for (const char c : token) {
    if (is_space(c) || std::iscntrl(static_cast<unsigned char>(c)) != 0) {
      throw std::runtime_error(fmt::format(
          "--token-file {}: the token holds whitespace or a control character; a bearer token is one word",
          file.string()));
    }
  }
  return std::string(token);
}

std::string write_new_token(const std::filesystem::path& file) {
  const auto folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::error_code error;
  if (!std::filesystem::exists(folder, error)) {
    std::filesystem::create_directories(folder, error);
    std::filesystem::permissions(folder, std::filesystem::perms::owner_all, error);
  }
  auto token = random_hex(2 * kTokenBytes);
  const auto temporary = folder / fmt::format(".{}.{}", file.filename().string(), getpid());
  // O_EXCL on a fresh name, mode 0600 from the start: the token is never readable by others.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot write the token file {}: {}", temporary.string(), std::strerror(errno)));
  }
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), file.c_str()) != 0) {
    const int failure = errno;
    std::filesystem::remove(temporary, error);
    throw std::runtime_error(
        fmt::format("cannot write the token file {}: {}", file.string(), std::strerror(failure)));
  }
  return token;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  const auto value = trimmed(authorization);
  if (value.size() <= kScheme.size() || !is_space(value[kScheme.size()])) {
    return false;
  }
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) {
      return false;
    }
  }
  return !token.empty() && same_secret(trimmed(value.substr(kScheme.size())), token);
}

}  // namespace kforge::serve
