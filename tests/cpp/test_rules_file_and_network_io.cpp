#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_file_and_network_io.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_file_and_network_io_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(FileAndNetworkIoRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, Severity severity = Severity::reject,
                   int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "file-and-network-io");
  EXPECT_EQ(findings[0].severity, severity);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(FileAndNetworkIoRule, Metadata) {
  const FileAndNetworkIoRule rule;
  EXPECT_EQ(rule.id(), "file-and-network-io");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(FileAndNetworkIoRule, BuiltinOpen) {
  const std::string source = model_with(R"(data = open("/tmp/out.bin", "rb").read())");
  expect_one_at(source, "open(");
  EXPECT_TRUE(testing::mentions(check(source)[0], "`open`"));
}

TEST(FileAndNetworkIoRule, ModulesForFilesAndNetworks) {
  expect_one_at("import socket\n" + model_with("pass"), "import socket");
  expect_one_at("from urllib.request import urlopen\n" + model_with("pass"), "from urllib");
  expect_one_at("import pickle as pk\n" + model_with("obj = pk.loads(self.blob)"), "import pickle");
  expect_one_at(model_with("import tempfile; d = tempfile.mkdtemp()"), "import tempfile");
  expect_one_at("import io\n" + model_with("pass"), "import io");
}

TEST(FileAndNetworkIoRule, OsFileOperations) {
  expect_one_at("import os\n" + model_with("names = os.listdir(\"/\")"), "os.listdir");
  expect_one_at("from os import remove\n" + model_with("remove(\"x\")"), "remove(");
  expect_one_at("import os.path\n" + model_with("ok = os.path.exists(\"/judge\")"), "os.path.exists");
}

TEST(FileAndNetworkIoRule, TorchAndNumpySerialisation) {
  expect_one_at(model_with("out = torch.load(\"cache.pt\")"), "torch.load");
  expect_one_at(model_with("torch.save(x, \"leak.pt\")"), "torch.save");
  expect_one_at("import numpy as np\n" + model_with("ref = np.load(\"ref.npy\")"), "np.load");
  expect_one_at(model_with("x.cpu().numpy().tofile(\"x.bin\")"), "x.cpu");
}

TEST(FileAndNetworkIoRule, PathlibIo) {
  expect_one_at("from pathlib import Path\n" + model_with("text = Path(\"/proc/self/cmdline\").read_text()"),
                "Path(");
  expect_one_at("import pathlib\n" + model_with(R"(p = pathlib.Path("a"); p.write_bytes(b""))"),
                "p.write_bytes");
}

TEST(FileAndNetworkIoRule, EnvironmentWritesRejectAndReadsWarn) {
  expect_one_at("import os\n" + model_with(R"(os.environ["TRITON_INTERPRET"] = "1")"), "os.environ");
  expect_one_at("import os\n" + model_with("os.environ.update(CUDA_LAUNCH_BLOCKING=\"1\")"), "os.environ");
  expect_one_at("import os\n" + model_with("del os.environ[\"X\"]"), "os.environ");
  expect_one_at("import os\n" + model_with(R"(os.putenv("X", "1"))"), "os.putenv");
  expect_one_at("import os\n" + model_with("mode = os.environ.get(\"KFORGE_MODE\")"), "os.environ",
                Severity::warn);
  expect_one_at("import os\n" + model_with("mode = os.getenv(\"KFORGE_MODE\")"), "os.getenv", Severity::warn);
  expect_one_at("from os import environ\n" + model_with("flag = \"X\" in environ"), "environ", Severity::warn,
                1);
  // A value read from the environment is not the environment: only the read is reported.
  expect_one_at("import os\n" + model_with(R"(mode = os.environ.get("M"); flag = mode == "1")"), "os.environ",
                Severity::warn);
}

TEST(FileAndNetworkIoRule, EnvironmentReadsWarnUnderBothProfiles) {
  const std::vector<Finding> findings =
      check("import os\n" + model_with("mode = os.environ[\"X\"]"), Profile::strict);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(FileAndNetworkIoRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(model_with("out = torch.load(\"c.pt\")"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(FileAndNetworkIoRule, RawDescriptorsAndStreamInternals) {
  // The forged-reply trick: the class of a standard stream's buffer opens any descriptor.
  const std::string forged = model_with("type(sys.stdout.buffer)(4, 'wb').write(b'{}')", "import sys");
  const auto findings = check(forged);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].location, location_of(forged, "type(sys"));
  expect_one_at(model_with("f = sys.stderr.buffer", "import sys"), "sys.stderr.buffer");
  expect_one_at(model_with("n = sys.stdout.fileno()", "import sys"), "sys.stdout.fileno");
  expect_one_at(model_with("cls = sys.stdout.__class__", "import sys"), "sys.stdout.__class__");
  expect_one_at(model_with("s = sys.__stdout__", "import sys"), "sys.__stdout__");
  expect_one_at(model_with("os.close(4)", "import os"), "os.close");
  expect_one_at(model_with("st = os.fstat(4)", "import os"), "os.fstat");
  expect_one_at(model_with("pass", "import fcntl"), "import fcntl");
  expect_one_at(model_with("pass", "from posix import write"), "from posix");
  expect_one_at(model_with("p = '/proc/self/fd/4'"), "'/proc/self/fd/4'");
  expect_one_at(model_with("p = '/dev/fd/4'"), "'/dev/fd/4'");
}

TEST(FileAndNetworkIoRule, PrintingToTheStandardStreamsIsFine) {
  EXPECT_TRUE(check(model_with("print(x.shape, file=sys.stderr)\n        sys.stdout.write('ok')\n"
                               "        sys.stdout.flush()",
                               "import sys"))
                  .empty());
}

TEST(FileAndNetworkIoRule, HonestLookalikesAreClean) {
  const std::string source = with_prelude(R"PY(
import os


class ModelNew(nn.Module):
    """Reads nothing: no open(), no torch.load(); the docstring only names them."""

    def __init__(self):
        super().__init__()
        self.load = 1

    def open(self, x):
        return launch_copy(x)

    def forward(self, x):
        # open("file") in a comment is not code
        name = os.path.join("a", "b")
        base = os.path.basename(name)
        return self.open(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_file_and_network_io_test
}  // namespace kforge::rules
