#include "verify/input_seeds.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <fstream>
#include <random>
#include <system_error>

#include "runner/environment_variable.hpp"
#include "store/content_hash.hpp"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kKeyBytes = 32;
constexpr std::size_t kFingerprintDigits = 12;
constexpr std::uint64_t kSeedMask = (std::uint64_t{1} << 63U) - 1;

std::string random_hex(std::size_t bytes) {
  std::random_device device;  // the kernel's random source on Linux
  std::string text;
  for (std::size_t i = 0; i < bytes; ++i) {
    text += fmt::format("{:02x}", device() & 0xFFU);
  }
  return text;
}

std::optional<std::string> read_key(const fs::path& file) {
  std::ifstream stream(file);
  std::string text;
  if (!std::getline(stream, text) || text.size() < 2 * kKeyBytes) {
    return std::nullopt;
  }
  return text;
}

// Creates the key file readable by the user only; nullopt when the folder or file cannot be written.
std::optional<std::string> create_key(const fs::path& file) {
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) {
    return std::nullopt;
  }
  const fs::path partial = file.string() + fmt::format(".{}", ::getpid());
  const std::string key = random_hex(kKeyBytes);
  {
    std::ofstream stream(partial, std::ios::trunc);
    stream << key << '\n';
    if (!stream) {
      return std::nullopt;
    }
  }
  fs::permissions(partial, fs::perms::owner_read | fs::perms::owner_write, error);
  fs::rename(partial, file, error);  // atomic: two kforge processes starting at once agree on one key
  if (error) {
    fs::remove(partial, error);
    return std::nullopt;
  }
  return read_key(file);
}

}  // namespace

std::string InputKey::describe() const {
  if (source == "ephemeral") {
    return "ephemeral (drawn for this run: inputs are not reproducible; set KFORGE_INPUT_KEY)";
  }
  return fmt::format("{} {}", source == "file" && file ? file->string() : source, fingerprint);
}

fs::path default_input_key_file() {
  if (const auto state = runner::environment_variable("XDG_STATE_HOME"); !state.empty()) {
    return fs::path(state) / "kforge" / "input-key";
  }
  const auto home = runner::environment_variable("HOME");
  return fs::path(home.empty() ? "/nonexistent" : home) / ".local" / "state" / "kforge" / "input-key";
}

InputKey load_input_key(std::string_view environment_value, const fs::path& file) {
  InputKey key;
  if (!environment_value.empty()) {
    key.secret = std::string(environment_value);
    key.source = "KFORGE_INPUT_KEY";
  } else if (auto stored = read_key(file); stored || (stored = create_key(file))) {
    key.secret = *stored;
    key.source = "file";
    key.file = file;
  } else {
    key.secret = random_hex(kKeyBytes);
    key.source = "ephemeral";
  }
  key.fingerprint =
      store::sha256_hex("kforge input key fingerprint\n" + key.secret).substr(0, kFingerprintDigits);
  return key;
}

const InputKey& process_input_key() {
  static const InputKey key =
      load_input_key(runner::environment_variable("KFORGE_INPUT_KEY"), default_input_key_file());
  return key;
}

InputSeeds::InputSeeds(const InputKey& key, std::uint64_t public_seed)
    : secret_(key.secret), public_seed_(public_seed) {}

std::uint64_t InputSeeds::derive(std::string_view purpose, std::uint64_t index) const {
  const std::string digest = store::hmac_sha256_hex(
      secret_, fmt::format("kforge-input-seed/{}/{}/{}", purpose, public_seed_, index));
  std::uint64_t value = 0;
  std::from_chars(digest.data(), digest.data() + 16, value, 16);
  return value & kSeedMask;
}

}  // namespace kforge::verify
