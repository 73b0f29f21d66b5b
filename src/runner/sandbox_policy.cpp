#include "runner/sandbox_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>
#include <string_view>

#include "runner/environment_variable.hpp"
#include "runner/host_memory.hpp"

namespace kforge::runner {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::array kKnownLayers{kLayerNamespaces,     kLayerRlimits, kLayerCapabilities,  kLayerLandlock,
                                  kLayerLandlockScopes, kLayerSeccomp, kLayerMemoryWatchdog};

}  // namespace

SandboxMode sandbox_mode_from_environment() {
  const std::string value = environment_variable("KFORGE_SANDBOX");
  if (value.empty() || value == "on") {
    return SandboxMode::on;
  }
  if (value == "strict") {
    return SandboxMode::strict;
  }
  if (value == "best-effort") {
    return SandboxMode::best_effort;
  }
  if (value == "off") {
    return SandboxMode::off;
  }
  throw std::runtime_error(
      fmt::format("KFORGE_SANDBOX={} is not a sandbox mode: expected strict, on, best-effort or off", value));
}

std::set<std::string> disabled_layers_from_environment() {
  std::set<std::string> layers;
  const std::string value = environment_variable("KFORGE_SANDBOX_DISABLE");
  std::string_view rest = value;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string layer(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (layer.empty()) {
      continue;
    }
    if (std::find(kKnownLayers.begin(), kKnownLayers.end(), layer) == kKnownLayers.end()) {
      throw std::runtime_error(fmt::format("KFORGE_SANDBOX_DISABLE names an unknown layer '{}': expected {}",
                                           layer, fmt::join(kKnownLayers, ", ")));
    }
    layers.insert(layer);
  }
  return layers;
}

namespace {

// A positive number of GiB from `name`, in bytes; nullopt when unset.
std::optional<std::uint64_t> gib_from_environment(const char* name) {
  const std::string value = environment_variable(name);
  if (value.empty()) {
    return std::nullopt;
  }
  double gib = 0.0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), gib);
  if (error != std::errc() || end != value.data() + value.size() || !(gib > 0.0)) {
    throw std::runtime_error(
        fmt::format("{}={} is not a positive number of GiB (e.g. 32 or 0.5)", name, value));
  }
  return static_cast<std::uint64_t>(gib * static_cast<double>(kGiB));
}

}  // namespace

std::uint64_t memory_limit_from_environment() {
  const auto configured = gib_from_environment("KFORGE_CANDIDATE_MEMORY_GIB");
  return configured ? *configured : default_memory_limit(available_memory_bytes());
}

std::optional<std::uint64_t> gpu_memory_limit_from_environment() {
  return gib_from_environment("KFORGE_CANDIDATE_GPU_MEMORY_GIB");
}

std::string to_string(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::strict:
      return "strict";
    case SandboxMode::on:
      return "on";
    case SandboxMode::best_effort:
      return "best-effort";
    case SandboxMode::off:
      return "off";
  }
  return "on";
}

}  // namespace kforge::runner
