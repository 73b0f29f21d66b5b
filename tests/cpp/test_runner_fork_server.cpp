#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runner/fork_server.hpp"
#include "runner/sandbox_policy.hpp"

namespace kforge::runner {
namespace {

WorkerLaunch judge_launch() {
  WorkerLaunch launch;
  launch.executable = "/usr/bin/python3";
  launch.arguments = {"-X", "faulthandler", "-m", "kforge.worker.judge"};
  launch.environment = {{"PYTHONPATH", "/opt/kforge/python"},
                        {"TMPDIR", "/tmp/a/judge"},
                        {"TRITON_CACHE_DIR", "/tmp/a/judge/triton-cache"},
                        {"HOME", "/home/user"}};
  launch.working_directory = "/tmp/a/judge";
  return launch;
}

void set_variable(WorkerLaunch& launch, const std::string& name, const std::string& value) {
  for (auto& [existing, old_value] : launch.environment) {
    if (existing == name) {
      old_value = value;
      return;
    }
  }
  launch.environment.emplace_back(name, value);
}

TEST(ForkServer, StartsOnlyAnUnsandboxedJudge) {
  EXPECT_TRUE(fork_server_may_start(judge_launch()));
  auto sandboxed = judge_launch();
  sandboxed.sandbox = SandboxPolicy{};
  EXPECT_FALSE(fork_server_may_start(sandboxed));
  auto sealed = judge_launch();
  sealed.hidden_reply_channel = true;
  EXPECT_FALSE(fork_server_may_start(sealed));
  auto candidate = judge_launch();
  candidate.arguments.back() = "kforge.worker.candidate";
  EXPECT_FALSE(fork_server_may_start(candidate));
  auto without_faulthandler = judge_launch();
  without_faulthandler.arguments = {"-m", "kforge.worker.judge"};
  EXPECT_FALSE(fork_server_may_start(without_faulthandler));
}

TEST(ForkServer, OneSocketPerEnvironmentWhateverTheEvaluationsFolders) {
  const std::filesystem::path folder = "/run/user/1000/kforge-fork";
  const auto base = fork_server_socket(folder, judge_launch());
  EXPECT_EQ(base.parent_path(), folder);
  EXPECT_TRUE(base.filename().string().starts_with("judge-"));

  auto other_folders = judge_launch();
  set_variable(other_folders, "TMPDIR", "/tmp/b/judge");
  set_variable(other_folders, "TRITON_CACHE_DIR", "/tmp/b/judge/triton-cache");
  EXPECT_EQ(fork_server_socket(folder, other_folders), base);

  auto other_path = judge_launch();
  set_variable(other_path, "PYTHONPATH", "/elsewhere");
  EXPECT_NE(fork_server_socket(folder, other_path), base);

  auto other_interpreter = judge_launch();
  other_interpreter.executable = "/usr/local/bin/python3";
  EXPECT_NE(fork_server_socket(folder, other_interpreter), base);

  auto other_home = judge_launch();  // the judge sees the user's site-packages: HOME matters
  set_variable(other_home, "HOME", "/home/other");
  EXPECT_NE(fork_server_socket(folder, other_home), base);
  auto no_user_site = judge_launch();
  set_variable(no_user_site, "PYTHONNOUSERSITE", "1");
  auto no_user_site_other_home = no_user_site;
  set_variable(no_user_site_other_home, "HOME", "/home/other");
  EXPECT_EQ(fork_server_socket(folder, no_user_site_other_home), fork_server_socket(folder, no_user_site));
}

TEST(ForkServer, TheWaitStatusComesOnTheConnectionAndAVanishedServerReadsAsAKill) {
  std::array<int, 2> ends{};
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends.data()), 0);
  EXPECT_FALSE(read_server_wait_status(ends[0], 0).has_value());  // nothing yet
  const std::string line = "{\"status\": 256}\n";
  ASSERT_EQ(write(ends[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_EQ(read_server_wait_status(ends[0], 1000), 256);  // exit status 1
  close(ends[1]);
  EXPECT_EQ(read_server_wait_status(ends[0], 1000), SIGKILL);
  close(ends[0]);
}

TEST(ForkServer, OnlyAPrivateFolderIsUsed) {
  const auto base = std::filesystem::temp_directory_path() / ("kforge-fork-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  ASSERT_EQ(unsetenv(kForkServerVariable), 0);
  EXPECT_FALSE(fork_server_folder().has_value());

  ASSERT_EQ(setenv(kForkServerVariable, base.c_str(), 1), 0);
  const auto created = fork_server_folder();
  ASSERT_TRUE(created.has_value());
  struct stat info {};
  ASSERT_EQ(stat(created->c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777U, 0700U);

  ASSERT_EQ(chmod(base.c_str(), 0777), 0);  // others could plant a socket there
  EXPECT_FALSE(fork_server_folder().has_value());
  ASSERT_EQ(unsetenv(kForkServerVariable), 0);
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace kforge::runner
