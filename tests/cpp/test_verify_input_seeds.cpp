#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "verify/input_seeds.hpp"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path folder =
      fs::temp_directory_path() / ("kforge-input-key-" + std::to_string(::getpid()) + name);
  fs::remove_all(folder);
  return folder;
}

TEST(InputSeeds, DependOnTheKeyThePublicSeedThePurposeAndTheIndex) {
  const InputKey key = load_input_key("key one", "/nonexistent/unused");
  const InputKey other = load_input_key("key two", "/nonexistent/unused");
  const InputSeeds seeds(key, 42);
  EXPECT_EQ(seeds.trial(0), InputSeeds(key, 42).trial(0)) << "reproducible for the same key and --seed";
  std::set<std::uint64_t> distinct{seeds.trial(0),
                                   seeds.trial(1),
                                   seeds.probe(),
                                   seeds.refresh(),
                                   seeds.timing(),
                                   seeds.perturbation(),
                                   seeds.generalisation(0),
                                   InputSeeds(key, 43).trial(0),
                                   InputSeeds(other, 42).trial(0)};
  EXPECT_EQ(distinct.size(), 9U);
  for (const auto seed : distinct) {
    EXPECT_LT(seed, std::uint64_t{1} << 63U) << "fits torch.manual_seed and JSON integers";
  }
  // Nothing about the old fixed offsets survives: seed + 1 + trial is not what the judge draws from.
  EXPECT_NE(seeds.trial(0), 43U);
  EXPECT_NE(seeds.probe(), 42U + 20'011U);
}

TEST(InputKey, TheEnvironmentWinsAndItsFingerprintRevealsNothing) {
  const InputKey key = load_input_key("s3cret", "/nonexistent/unused");
  EXPECT_EQ(key.source, "KFORGE_INPUT_KEY");
  EXPECT_EQ(key.fingerprint.size(), 12U);
  EXPECT_EQ(key.describe().find("s3cret"), std::string::npos);
}

TEST(InputKey, AFileIsCreatedOnceReadableByTheUserOnlyAndReadBack) {
  const fs::path folder = fresh_folder("-file");
  const fs::path file = folder / "state" / "kforge" / "input-key";
  const InputKey first = load_input_key("", file);
  ASSERT_EQ(first.source, "file");
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  const InputKey second = load_input_key("", file);
  EXPECT_EQ(second.secret, first.secret);
  EXPECT_EQ(InputSeeds(first, 7).trial(3), InputSeeds(second, 7).trial(3));
  fs::remove_all(folder);
}

TEST(InputKey, WithoutAWritableFileTheKeyIsEphemeralAndSaysSo) {
  const fs::path folder = fresh_folder("-blocked");
  fs::create_directories(folder);
  std::ofstream(folder / "not-a-folder") << "x";  // the key's folder would have to be this file
  const InputKey key = load_input_key("", folder / "not-a-folder" / "input-key");
  EXPECT_EQ(key.source, "ephemeral");
  EXPECT_NE(key.describe().find("not reproducible"), std::string::npos);
  EXPECT_NE(load_input_key("", folder / "not-a-folder" / "input-key").secret, key.secret);
  fs::remove_all(folder);
}

}  // namespace
}  // namespace kforge::verify
