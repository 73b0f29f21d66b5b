#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kforge::verify {

// The secret every input seed is derived from. The candidate knows `--seed` (ModelNew is built after
// torch.manual_seed(seed), KernelBench's convention, so torch.initial_seed() tells it), kforge's
// source and this document: seeds at fixed offsets of `--seed` would let it draw the trial inputs
// itself. The key is what it lacks: KFORGE_INPUT_KEY when set (any text; the same value reproduces
// the same inputs on another machine), else the 32 random bytes of a per-user file created on first
// use (readable by the user only, outside everything the candidate sandbox lets a candidate read),
// else a key drawn for this process (inputs then differ from run to run, and the verdict says so).
struct InputKey {
  std::string secret;
  std::string source;       // "KFORGE_INPUT_KEY", "file", "ephemeral"
  std::string fingerprint;  // 12 hex digits of a hash of the secret: tells keys apart, reveals nothing
  std::optional<std::filesystem::path> file;

  std::string describe() const;  // for the verdict's settings
};

// $XDG_STATE_HOME/kforge/input-key, else ~/.local/state/kforge/input-key.
std::filesystem::path default_input_key_file();
// The key from `environment_value` (KFORGE_INPUT_KEY) or `file` (created when missing), else ephemeral.
InputKey load_input_key(std::string_view environment_value, const std::filesystem::path& file);
// This process's key, read once (KFORGE_INPUT_KEY, then default_input_key_file()).
const InputKey& process_input_key();

// Every seed one evaluation draws inputs (and the parameter perturbation) from: HMAC-SHA-256 of the
// purpose, `--seed` and an index under the key, cut to 63 bits. Only the supervisor and the judge see
// them; the candidate process gets inputs, never seeds. Model construction keeps the public `--seed`.
class InputSeeds {
 public:
  InputSeeds(const InputKey& key, std::uint64_t public_seed);

  std::uint64_t trial(int index) const { return derive("trial", static_cast<std::uint64_t>(index)); }
  std::uint64_t probe() const { return derive("probe", 0); }
  std::uint64_t refresh() const { return derive("refresh", 0); }
  // Index 0: the timed inputs; 1, 2, ...: the value sets rotated between samples.
  std::uint64_t timing(int index = 0) const { return derive("timing", static_cast<std::uint64_t>(index)); }
  std::uint64_t perturbation() const { return derive("perturbation", 0); }
  std::uint64_t generalisation(int index) const {
    return derive("generalisation", static_cast<std::uint64_t>(index));
  }

 private:
  std::uint64_t derive(std::string_view purpose, std::uint64_t index) const;

  std::string secret_;
  std::uint64_t public_seed_;
};

}  // namespace kforge::verify
