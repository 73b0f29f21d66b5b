#include "runner/timing_lease.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include "runner/environment_variable.hpp"

namespace kforge::runner {
namespace {

std::string safe_file_name(const std::string& identity) {
  std::string name;
  for (const char c : identity) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    name += plain ? c : '_';
  }
  return name.empty() ? "gpu" : name;
}

}  // namespace

std::filesystem::path lease_directory() {
  if (auto dir = environment_variable("KFORGE_LOCK_DIR"); !dir.empty()) {
    return dir;
  }
  if (auto runtime = environment_variable("XDG_RUNTIME_DIR"); !runtime.empty()) {
    return std::filesystem::path(runtime) / "kforge";
  }
  return "/tmp/kforge-locks";
}

TimingLease TimingLease::acquire(const std::string& gpu_identity, std::chrono::milliseconds wait_limit) {
  const auto directory = lease_directory();
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  const auto path = directory / fmt::format("gpu-{}.lock", safe_file_name(gpu_identity));
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("cannot open the timing lock {}: {} (set KFORGE_LOCK_DIR to a writable "
                    "folder)",
                    path.string(), std::strerror(errno)));
  }
  const auto start = std::chrono::steady_clock::now();
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const auto waited = std::chrono::steady_clock::now() - start;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      close(fd);
      throw std::runtime_error(fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
    }
    if (waited >= wait_limit) {
      close(fd);
      throw std::runtime_error(
          fmt::format("another kforge process held the timing lease of {} for over {} s", gpu_identity,
                      std::chrono::duration_cast<std::chrono::seconds>(wait_limit).count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  return {fd, path, waited};
}

TimingLease::TimingLease(int fd, std::filesystem::path path, std::chrono::milliseconds waited)
    : fd_(fd), path_(std::move(path)), waited_(waited) {}

TimingLease::TimingLease(TimingLease&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), waited_(other.waited_) {}

TimingLease& TimingLease::operator=(TimingLease&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    waited_ = other.waited_;
  }
  return *this;
}

TimingLease::~TimingLease() {
  if (fd_ >= 0) {
    close(fd_);  // closing the descriptor releases the flock
  }
}

}  // namespace kforge::runner
