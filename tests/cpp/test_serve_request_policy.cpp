#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/job_table.hpp"
#include "serve/request_policy.hpp"
#include "serve/service_token.hpp"

namespace kforge::serve {
namespace {

using namespace std::chrono_literals;

class TempFolder {
 public:
  TempFolder()
      : path_(std::filesystem::temp_directory_path() /
              ("kforge-test-token-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  TempFolder(TempFolder&&) = delete;
  TempFolder& operator=(TempFolder&&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline std::atomic<int> counter_{0};
  std::filesystem::path path_;
};

void write(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

TEST(ServiceToken, TheFirstLineIsTrimmedOfCrlfAndSpaces) {
  const TempFolder folder;
  const auto file = folder.path() / "token";
  write(file, "  s3cret-token\r\nsecond line ignored\n");
  EXPECT_EQ(read_token_file(file), "s3cret-token");
  write(file, "s3cret-token");  // no line end at all
  EXPECT_EQ(read_token_file(file), "s3cret-token");
}

TEST(ServiceToken, AnEmptyOrBrokenTokenIsRefusedNamingTheFile) {
  const TempFolder folder;
  const auto file = folder.path() / "token";
  const std::vector<std::string> broken = {"\r\n", "   \n", "", "two words\n", std::string("nul\0x\n", 6)};
  for (const auto& bytes : broken) {
    write(file, bytes);
    try {
      read_token_file(file);
      FAIL() << "accepted a token file holding '" << bytes << "'";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(file.string()), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(read_token_file(folder.path() / "missing"), std::runtime_error);
}

TEST(ServiceToken, ANewTokenIsRandomAndOnlyItsOwnerCanReadIt) {
  const TempFolder folder;
  const auto file = folder.path() / "sub" / "serve-token";
  const auto first = write_new_token(file);
  EXPECT_EQ(first.size(), 64U);
  EXPECT_EQ(read_token_file(file), first);
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777U, 0600U);
  const auto second = write_new_token(file);
  EXPECT_NE(first, second);
  EXPECT_EQ(read_token_file(file), second);
}

TEST(ServiceToken, TheBearerSchemeIsCaseInsensitiveAndTheTokenExact) {
  EXPECT_TRUE(bearer_matches("Bearer abc", "abc"));
  EXPECT_TRUE(bearer_matches("bearer abc", "abc"));
  EXPECT_TRUE(bearer_matches("BEARER   abc ", "abc"));
  EXPECT_FALSE(bearer_matches("Bearer abcd", "abc"));
  EXPECT_FALSE(bearer_matches("Bearer ABC", "abc")) << "the token itself is case-sensitive";
  EXPECT_FALSE(bearer_matches("Basic abc", "abc"));
  EXPECT_FALSE(bearer_matches("Bearerabc", "abc"));
  EXPECT_FALSE(bearer_matches("Bearer ", ""));
  EXPECT_FALSE(bearer_matches("abc", "abc"));
}

HttpRequest request_with(std::map<std::string, std::string> headers) {
  HttpRequest request;
  request.method = "POST";
  request.path = "/v1/problems";
  request.headers = std::move(headers);
  return request;
}

TEST(RequestPolicy, RequestsFromOtherOriginsAreRefused) {
  EXPECT_FALSE(refuse_cross_origin(request_with({})));
  EXPECT_FALSE(
      refuse_cross_origin(request_with({{"host", "127.0.0.1:8000"}, {"origin", "http://127.0.0.1:8000"}})));
  EXPECT_FALSE(refuse_cross_origin(request_with({{"sec-fetch-site", "same-origin"}})));
  EXPECT_FALSE(refuse_cross_origin(request_with({{"sec-fetch-site", "none"}})));
  for (const auto& headers : std::vector<std::map<std::string, std::string>>{
           {{"host", "127.0.0.1:8000"}, {"origin", "http://evil.example"}},
           {{"host", "127.0.0.1:8000"}, {"origin", "null"}},
           {{"origin", "http://127.0.0.1:8000"}},  // no Host to compare with
           {{"host", "127.0.0.1:8000"}, {"origin", "http://127.0.0.1:8001"}},
           {{"sec-fetch-site", "cross-site"}},
           {{"sec-fetch-site", "same-site"}}}) {
    const auto refused = refuse_cross_origin(request_with(headers));
    ASSERT_TRUE(refused) << headers.begin()->second;
    EXPECT_EQ(refused->status, 403);
    EXPECT_NE(refused->body.find("cross-origin"), std::string::npos);
  }
}

TEST(RequestPolicy, OnlyJsonBodiesAreAccepted) {
  EXPECT_FALSE(refuse_non_json_body(request_with({{"content-type", "application/json"}})));
  EXPECT_FALSE(refuse_non_json_body(request_with({{"content-type", "Application/JSON; charset=utf-8"}})));
  for (const auto& headers : std::vector<std::map<std::string, std::string>>{
           {},
           {{"content-type", "text/plain"}},
           {{"content-type", "application/x-www-form-urlencoded"}},
           {{"content-type", "multipart/form-data; boundary=x"}},
           {{"content-type", "application/jsonx"}}}) {
    const auto refused = refuse_non_json_body(request_with(headers));
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 415);
    EXPECT_NE(refused->body.find("unsupported-media-type"), std::string::npos);
  }
}

TEST(JobTable, AWaiterIsCalledWhenItsJobFinishesOrAtItsDeadline) {
  JobTable jobs;
  const auto finished_job = jobs.create(1, {});
  jobs.start(finished_job);
  jobs.finish(finished_job);
  bool at_once = false;
  jobs.when_finished(finished_job, JobTable::Clock::now() + 10s, [&](bool finished) { at_once = finished; });
  EXPECT_TRUE(at_once) << "an already finished job is answered in the caller's thread";

  const auto later = jobs.create(1, {});
  jobs.start(later);
  EXPECT_EQ(jobs.running(), 1U);
  std::promise<bool> later_result;
  jobs.when_finished(later, JobTable::Clock::now() + 60s,
                     [&](bool finished) { later_result.set_value(finished); });
  EXPECT_EQ(jobs.waiters(), 1U);
  jobs.set_result(later, 0, {{"index", 0}});
  EXPECT_EQ(nlohmann::json::parse(*jobs.document(later, true))["results"],
            nlohmann::json::parse(R"([{"index":0}])"));
  jobs.finish(later);
  const auto later_document = nlohmann::json::parse(*jobs.document(later, true));
  EXPECT_EQ(later_document["status"], "done");
  EXPECT_EQ(later_document["total"], 1);
  EXPECT_EQ(later_document["results"], nlohmann::json::parse(R"([{"index":0}])")) << "kept as text, the same";
  EXPECT_FALSE(nlohmann::json::parse(*jobs.document(later, false)).contains("results"));
  EXPECT_FALSE(jobs.document("no-such-job", true));
  auto later_future = later_result.get_future();
  ASSERT_EQ(later_future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(later_future.get());
  EXPECT_EQ(jobs.running(), 0U);

  const auto slow = jobs.create(1, {});
  jobs.start(slow);
  std::promise<bool> slow_result;
  jobs.when_finished(slow, JobTable::Clock::now() + 50ms,
                     [&](bool finished) { slow_result.set_value(finished); });
  auto slow_future = slow_result.get_future();
  ASSERT_EQ(slow_future.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(slow_future.get()) << "the deadline came first";
  EXPECT_EQ(jobs.waiters(), 0U);
}

TEST(JobTable, CloseAnswersEveryWaiterBeforeItReturnsAndLaterWaitersAtOnce) {
  JobTable jobs;
  const auto finished_job = jobs.create(1, {});
  jobs.start(finished_job);
  const auto unfinished_job = jobs.create(1, {});
  jobs.start(unfinished_job);
  std::atomic<int> calls = 0;
  std::optional<bool> unfinished_answer;
  jobs.when_finished(finished_job, JobTable::Clock::now() + 3600s, [&](bool finished) {
    std::this_thread::sleep_for(50ms);  // still running when close() is called
    EXPECT_TRUE(finished);
    ++calls;
  });
  jobs.when_finished(unfinished_job, JobTable::Clock::now() + 3600s, [&](bool finished) {
    unfinished_answer = finished;
    ++calls;
  });
  jobs.finish(finished_job);  // its waiter is due on the waiter thread
  jobs.close();
  EXPECT_EQ(calls, 2) << "close() returns once every callback has run: none may run after it";
  ASSERT_TRUE(unfinished_answer.has_value());
  EXPECT_FALSE(*unfinished_answer) << "a job still running is answered as not finished";
  EXPECT_EQ(jobs.waiters(), 0U);

  const auto after_close = jobs.create(1, {});
  jobs.start(after_close);
  std::optional<bool> late_answer;
  jobs.when_finished(after_close, JobTable::Clock::now() + 3600s,
                     [&](bool finished) { late_answer = finished; });
  ASSERT_TRUE(late_answer.has_value()) << "after close() a waiter is answered in the caller's thread";
  EXPECT_FALSE(*late_answer);
  jobs.close();  // idempotent
}

}  // namespace
}  // namespace kforge::serve
