#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string_view>

#include "rules/module_table.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

constexpr auto kTable = std::to_array<std::string_view>(
    {"os", "torch.cuda.Stream", "torch.cuda", "torch.multiprocessing", "a..b", "builtins.open", "os", "x"});

TEST(ModuleTable, MatchesAnOriginInsideAnEntryAtComponentBoundariesOnly) {
  const ModuleTable table(kTable);
  EXPECT_EQ(table.match("os"), "os");
  EXPECT_EQ(table.match("os.path.join"), "os");
  EXPECT_EQ(table.match("torch.multiprocessing.Process"), "torch.multiprocessing");
  EXPECT_EQ(table.match("builtins.open"), "builtins.open");
  EXPECT_EQ(table.match("x.y"), "x");
  EXPECT_EQ(table.match("osx"), std::nullopt);
  EXPECT_EQ(table.match("torch.cu"), std::nullopt);
  EXPECT_EQ(table.match("torch"), std::nullopt);
  EXPECT_EQ(table.match("torch.cudagraphs"), std::nullopt);
  EXPECT_EQ(table.match("builtins.opened"), std::nullopt);
  EXPECT_EQ(table.match(""), std::nullopt);
  EXPECT_EQ(table.match(".os"), std::nullopt);
}

TEST(ModuleTable, GivesTheFirstEntryInTableOrderAsTheLinearScanDoes) {
  const ModuleTable table(kTable);
  // "torch.cuda.Stream" comes before "torch.cuda" in the table, so it wins for a stream's origin.
  EXPECT_EQ(table.match("torch.cuda.Stream.wait_stream"), "torch.cuda.Stream");
  EXPECT_EQ(table.match("torch.cuda.synchronize"), "torch.cuda");
  for (const std::string_view origin :
       {"os", "os.fork", "torch.cuda.Stream", "torch.cuda.Streams", "torch.cuda.Stream()", "a..b", "a..b.c",
        "a.", "a", "x", "xy", "torch.multiprocessing", "", "builtins", "builtins.open()"}) {
    EXPECT_EQ(table.match(origin), module_match(origin, kTable)) << origin;
  }
}

TEST(ModuleTable, AnEmptyTableMatchesNothingAndAnEmptyEntryMatchesLikeInModule) {
  EXPECT_EQ(ModuleTable({}).match("os"), std::nullopt);
  constexpr auto kWithEmpty = std::to_array<std::string_view>({""});
  const ModuleTable table(kWithEmpty);
  for (const std::string_view origin : {"", ".a", "a"}) {
    EXPECT_EQ(table.match(origin), module_match(origin, kWithEmpty)) << origin;
  }
}

}  // namespace
}  // namespace kforge::rules
