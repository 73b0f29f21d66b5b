#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_threads_and_processes.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_threads_and_processes_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(ThreadsAndProcessesRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "threads-and-processes");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(ThreadsAndProcessesRule, Metadata) {
  const ThreadsAndProcessesRule rule;
  EXPECT_EQ(rule.id(), "threads-and-processes");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(ThreadsAndProcessesRule, ImportStatementsAreReportedOnce) {
  const std::string source =
      "import threading\n" + model_with("threading.Thread(target=launch_copy).start()");
  expect_one_at(source, "import threading");
  EXPECT_TRUE(testing::mentions(check(source)[0], "import of `threading`"));
  expect_one_at("from concurrent.futures import ThreadPoolExecutor as Pool\n" + model_with("Pool(2)"),
                "from concurrent");
  expect_one_at("import subprocess, signal\n" + model_with("pass"), "import subprocess");
  EXPECT_TRUE(testing::mentions(check("import subprocess, signal\n" + model_with("pass"))[0],
                                "`subprocess` and `signal`"));
  expect_one_at("import multiprocessing.pool as mpp\n" + model_with("pass"), "import multiprocessing");
  expect_one_at("from torch import multiprocessing as tmp\n" + model_with("tmp.spawn(launch_copy)"),
                "from torch");
}

TEST(ThreadsAndProcessesRule, ModulesThatRunShellCommandsOnTheSide) {
  // pydoc.pipepager('', 'sleep 86 &') starts a shell: found by bench/serve_load past the old list.
  expect_one_at("import pydoc\n" + model_with("pydoc.pipepager('', 'sleep 86 &')"), "import pydoc");
  expect_one_at(model_with("import webbrowser; webbrowser.open('x')"), "import webbrowser");
}

TEST(ThreadsAndProcessesRule, ImportInsideAFunction) {
  expect_one_at(model_with("import asyncio; asyncio.run(None)"), "import asyncio");
}

TEST(ThreadsAndProcessesRule, TorchMultiprocessingThroughTorch) {
  expect_one_at(model_with("torch.multiprocessing.spawn(launch_copy, nprocs=2)"), "torch.multiprocessing");
}

TEST(ThreadsAndProcessesRule, OsProcessPrimitives) {
  expect_one_at("import os\n" + model_with("pid = os.fork()"), "os.fork");
  expect_one_at("import os\n" + model_with("os.system(\"nvidia-smi\")"), "os.system");
  expect_one_at("from os import kill as k\n" + model_with("k(1, 9)"), "k(1");
  expect_one_at("import os\n" + model_with("os.execv(\"/bin/sh\", [])"), "os.execv");
}

TEST(ThreadsAndProcessesRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check("import threading\n" + model_with("pass"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(ThreadsAndProcessesRule, HonestLookalikesAreClean) {
  const std::string source = with_prelude(R"PY(
import os
import sys


class ModelNew(nn.Module):
    """Does not use threading.Thread or os.fork(); this docstring only names them."""

    def forward(self, x):
        # subprocess.run("ls") in a comment is not code.
        threads = 4
        pid = os.getpid()
        path = os.path.join("a", "b")
        if x.numel() == 0:
            sys.exit(0)
        return launch_copy(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_threads_and_processes_test
}  // namespace kforge::rules
