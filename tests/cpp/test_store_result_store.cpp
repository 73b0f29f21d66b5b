#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/content_hash.hpp"
#include "store/result_store.hpp"

namespace kforge::store {
namespace {

namespace fs = std::filesystem;

class ResultStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("kforge-store-test-" + std::to_string(getpid()));
    fs::remove_all(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path file() const { return folder_ / "nested" / "results.sqlite"; }

  static EvaluationIdentity identity(const std::string& candidate) {
    return {sha256_hex("problem"),
            sha256_hex(candidate),
            "NVIDIA H100 80GB HBM3",
            {{"torch", "2.11.0"}, {"triton", "3.6.0"}},
            {{"trials", 5}}};
  }

  fs::path folder_;
};

TEST(ContentHash, MatchesKnownSha256) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(ResultStoreTest, StoresAndFindsAVerdictAcrossReopen) {
  {
    auto store = ResultStore::open(file());
    EXPECT_FALSE(store->find_verdict(identity("a")));
    store->put_verdict(identity("a"), {{"outcome", "accepted"}, {"speedup", 1.5}});
  }
  auto reopened = ResultStore::open(file());
  const auto found = reopened->find_verdict(identity("a"));
  ASSERT_TRUE(found);
  EXPECT_EQ((*found)["outcome"], "accepted");
  EXPECT_DOUBLE_EQ((*found)["speedup"].get<double>(), 1.5);
  EXPECT_TRUE(found->contains("stored")) << "a stored verdict says so";
  EXPECT_EQ(reopened->verdict_count(), 1U);
}

TEST_F(ResultStoreTest, EveryPartOfTheIdentityChangesTheKey) {
  const auto base = identity("a");
  auto other_gpu = base;
  other_gpu.gpu = "NVIDIA H200";
  auto other_versions = base;
  other_versions.versions["torch"] = "2.12.0";
  auto other_settings = base;
  other_settings.settings["trials"] = 6;
  for (const auto& changed : {identity("b"), other_gpu, other_versions, other_settings}) {
    EXPECT_NE(changed.key(), base.key());
  }
  auto store = ResultStore::open(file());
  store->put_verdict(base, {{"outcome", "rejected"}});
  EXPECT_FALSE(store->find_verdict(other_gpu));
  EXPECT_TRUE(store->find_verdict(base));
}

TEST_F(ResultStoreTest, BaselinesRoundTrip) {
  auto store = ResultStore::open(file());
  const BaselineIdentity eager{
      sha256_hex("problem"), "gpu", {{"torch", "2.11"}}, {{"small", false}}, "eager"};
  auto compiled = eager;
  compiled.kind = "compile";
  store->put_baseline(eager, {{"kind", "eager"}, {"samples_ms", {0.2, 0.21}}, {"median_ms", 0.205}});
  ASSERT_TRUE(store->find_baseline(eager));
  EXPECT_EQ((*store->find_baseline(eager))["median_ms"], 0.205);
  EXPECT_FALSE(store->find_baseline(compiled)) << "an eager baseline is not a torch.compile one";
}

TEST_F(ResultStoreTest, AnUnwritablePathIsAClearError) {
  try {
    ResultStore::open("/proc/kforge/results.sqlite");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("--store"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace kforge::store
