#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "optimize/tunable_knobs.hpp"
#include "source/python_parser.hpp"
#include "test_file_text.hpp"

namespace kforge::optimize {
namespace optimize_tunable_knobs_test {

constexpr const char* kCandidate = R"(import torch
import triton
import triton.language as tl

BLOCK = 1024
ROWS = 4


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    pass


@triton.jit
def norm_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):
    pass


class ModelNew(torch.nn.Module):
    TILE = 64

    def __init__(self):
        super().__init__()
        self.warps = 4

    def forward(self, x):
        out = torch.empty_like(x)
        scale_kernel[(4,)](x, out, x.numel(), ACTIVATION=1, BLOCK=BLOCK, ROWS_PER_PROGRAM=ROWS, num_warps=self.warps)
        norm_kernel[(4,)](x, x.numel(), BLOCK_SIZE=triton.next_power_of_2(x.shape[1]), num_stages=2)
        norm_kernel[(4,)](out, out.numel(), BLOCK_SIZE=self.TILE)
        return out
)";

const Knob* knob_named(const KnobSearch& search, const std::string& name) {
  const auto found = std::find_if(search.knobs.begin(), search.knobs.end(),
                                  [&](const Knob& knob) { return knob.name == name; });
  return found == search.knobs.end() ? nullptr : &*found;
}

bool fixed_mentions(const KnobSearch& search, const std::string& text) {
  return std::any_of(search.fixed.begin(), search.fixed.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

TEST(TunableKnobs, FindsLaunchSizesThroughLiteralsConstantsAndAttributes) {
  const auto search = find_knobs(kCandidate);
  const auto* block = knob_named(search, "BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->kind, KnobKind::block_size);
  EXPECT_EQ(block->value, 1024);
  EXPECT_NE(block->where.find("module constant BLOCK"), std::string::npos) << block->where;
  EXPECT_EQ(block->choices.front(), 16);
  EXPECT_EQ(block->choices.back(), 16384);
  EXPECT_EQ(block->choices.size(), 11U) << "the powers of two between";
  const auto* warps = knob_named(search, "num_warps");
  ASSERT_NE(warps, nullptr) << "self.warps = 4 in __init__";
  EXPECT_EQ(warps->value, 4);
  const auto* stages = knob_named(search, "num_stages");
  ASSERT_NE(stages, nullptr) << "a literal at the launch";
  EXPECT_EQ(stages->literal, "2");
  const auto* tile = knob_named(search, "BLOCK_SIZE");
  ASSERT_NE(tile, nullptr) << "class attribute TILE";
  EXPECT_EQ(tile->value, 64);
  EXPECT_EQ(tile->kernels, std::vector<std::string>{"norm_kernel"});
  EXPECT_EQ(knob_named(search, "ACTIVATION"), nullptr) << "a behaviour switch is not a size";
  EXPECT_EQ(knob_named(search, "ROWS_PER_PROGRAM"), nullptr) << "not a size by its name";
  EXPECT_TRUE(fixed_mentions(search, "BLOCK_SIZE of the launch of norm_kernel")) << "computed from the input";
}

TEST(TunableKnobs, RewritingChangesOnlyTheLiteralsAndTheResultParses) {
  const auto search = find_knobs(kCandidate);
  std::vector<long long> values;
  for (const auto& knob : search.knobs) {  // the literals only: the launch options left out stay out
    const bool literal = knob.site == KnobSite::literal;
    values.push_back(knob.name == "BLOCK" ? 2048 : knob.name == "num_warps" && literal ? 8 : knob.value);
  }
  const auto rewritten = rewrite_knobs(kCandidate, search.knobs, values);
  EXPECT_NE(rewritten.find("BLOCK = 2048\n"), std::string::npos);
  EXPECT_NE(rewritten.find("self.warps = 8\n"), std::string::npos);
  EXPECT_NE(rewritten.find("TILE = 64\n"), std::string::npos);
  EXPECT_EQ(rewritten.size(), std::string(kCandidate).size()) << "1024 -> 2048 and 4 -> 8 keep the length";
  EXPECT_TRUE(source::parse_module(rewritten).ok());
  const auto again = find_knobs(rewritten);
  EXPECT_EQ(knob_named(again, "BLOCK")->value, 2048);

  auto wrong = values;
  wrong.front() = 3;
  EXPECT_THROW(rewrite_knobs(kCandidate, search.knobs, wrong), std::invalid_argument) << "not a choice";
  EXPECT_THROW(rewrite_knobs("x = 1\n", search.knobs, values), std::invalid_argument) << "another source";
  EXPECT_THROW(find_knobs("def broken(:\n"), std::invalid_argument);
}

TEST(TunableKnobs, TheStarterMatmulExposesItsTilesGroupWarpsAndStages) {
  const auto source = test_support::file_text(std::filesystem::path(KFORGE_SOURCE_DIR) /
                                              "problems/starter/13_matmul_fp16/solution.py");
  const auto search = find_knobs(source);
  for (const char* name : {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"}) {
    ASSERT_NE(knob_named(search, name), nullptr) << name;
  }
  EXPECT_EQ(knob_named(search, "GROUP_M")->kind, KnobKind::group_size);
  EXPECT_EQ(knob_named(search, "BLOCK_M")->value, 128);
}

TEST(TunableKnobs, EveryBaselineSolutionExposesABlockSizeAndItsLaunchOptions) {
  const auto suite = std::filesystem::path(KFORGE_SOURCE_DIR) / "problems" / "baseline";
  int solutions = 0;
  for (const auto& entry : std::filesystem::directory_iterator(suite)) {
    if (!entry.is_directory()) {
      continue;
    }
    ++solutions;
    const auto search = find_knobs(test_support::file_text(entry.path() / "solution.py"));
    const auto has_kind = [&](KnobKind kind) {
      return std::any_of(search.knobs.begin(), search.knobs.end(),
                         [&](const Knob& knob) { return knob.kind == kind; });
    };
    EXPECT_TRUE(has_kind(KnobKind::block_size)) << entry.path();
    EXPECT_TRUE(has_kind(KnobKind::num_warps)) << entry.path();
    EXPECT_TRUE(has_kind(KnobKind::num_stages)) << entry.path();
    EXPECT_TRUE(search.fixed.empty())
        << entry.path() << ": " << (search.fixed.empty() ? "" : search.fixed.front());
  }
  EXPECT_GE(solutions, 12) << "issue 6 asks for at least 12 baseline kernels";
}

TEST(TunableKnobs, AnAutotunedKernelsLaunchSizesBelongToItsConfigs) {
  const auto search = find_knobs(R"(import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4)], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew:
    def forward(self, x):
        k[(1,)](x, x.numel(), BLOCK=128)
        return x
)");
  EXPECT_TRUE(fixed_mentions(search, "BLOCK of k: set by the kernel's triton.autotune configs"));
  // The only config's values are what runs: they are the knobs.
  const Knob* block = knob_named(search, "BLOCK");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->value, 256);
  EXPECT_NE(block->where.find("the only autotune config of k"), std::string::npos) << block->where;
  ASSERT_NE(knob_named(search, "num_warps"), nullptr);
  EXPECT_EQ(knob_named(search, "num_warps")->value, 4);
}

constexpr const char* kAutotuned = R"(import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64}, num_warps=4, num_stages=3),  # small
    triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128},
                  num_warps=8, num_stages=4),
    triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'ACT': 'relu'}, num_warps=8),
]


@triton.autotune(configs=CONFIGS, key=['M', 'N'])
@triton.jit
def tiled_kernel(x_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ACT: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({'BLOCK': b}) for b in (128, 256)], key=['n'])
@triton.jit
def built_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(torch.nn.Module):
    def forward(self, x):
        tiled_kernel[(1,)](x, x.shape[0], x.shape[1])
        built_kernel[(1,)](x, x.numel())
        return x
)";

TEST(TunableKnobs, SeveralAutotuneConfigsAreOneKnobThatPinsEach) {
  const auto search = find_knobs(kAutotuned);
  const Knob* configs = knob_named(search, "configs");
  ASSERT_NE(configs, nullptr);
  EXPECT_EQ(configs->kind, KnobKind::autotune_config);
  EXPECT_EQ(configs->value, -1) << "the start keeps the autotuner";
  EXPECT_EQ(configs->choices, (std::vector<long long>{-1, 0, 1, 2}));
  EXPECT_EQ(configs->kernels, (std::vector<std::string>{"tiled_kernel"}));
  EXPECT_NE(configs->where.find("module constant CONFIGS at 5:1"), std::string::npos) << configs->where;
  ASSERT_EQ(configs->configs.size(), 3U);
  EXPECT_EQ(configs->configs[0], "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64}, num_warps=4, num_stages=3)");
  EXPECT_EQ(configs->configs[1],
            "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128},\n                  num_warps=8, num_stages=4)");
  EXPECT_TRUE(
      fixed_mentions(search, "the autotune configs of built_kernel: not a list of triton.Config calls"));

  // Keeping the list rewrites nothing; pinning config 1 leaves a list of that config alone, which
  // parses, and whose values are knobs in turn.
  EXPECT_EQ(rewrite_knobs(kAutotuned, search.knobs, {-1}), kAutotuned);
  const auto pinned = rewrite_knobs(kAutotuned, search.knobs, {1});
  EXPECT_NE(pinned.find(
                "CONFIGS = [triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128},\n                  num_warps=8, "
                "num_stages=4)]\n\n\n@triton.autotune"),
            std::string::npos)
      << pinned;
  EXPECT_TRUE(source::parse_module(pinned).ok());
  const auto second = find_knobs(pinned);
  EXPECT_EQ(knob_named(second, "configs"), nullptr);
  ASSERT_NE(knob_named(second, "BLOCK_N"), nullptr);
  EXPECT_EQ(knob_named(second, "BLOCK_N")->value, 128);
  ASSERT_NE(knob_named(second, "num_stages"), nullptr);
  EXPECT_EQ(knob_named(second, "num_stages")->value, 4);
  std::vector<long long> values;
  for (const auto& knob : second.knobs) {
    values.push_back(knob.name == "BLOCK_N" ? 64 : knob.value);
  }
  EXPECT_NE(rewrite_knobs(pinned, second.knobs, values).find("{'BLOCK_M': 128, 'BLOCK_N': 64}"),
            std::string::npos);
  EXPECT_THROW(static_cast<void>(rewrite_knobs(kAutotuned, search.knobs, {3})), std::invalid_argument);
}

// One list decorating two kernels is one knob for both (two knobs would rewrite the same text twice).
TEST(TunableKnobs, AConfigListSharedByTwoKernelsIsOneKnob) {
  const std::string source = R"(import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})]
ONE = [triton.Config({"BLOCK": 512}, num_warps=4)]

@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def a(x_ptr, n, BLOCK: tl.constexpr):
    pass

@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def b(x_ptr, n, BLOCK: tl.constexpr):
    pass

@triton.autotune(configs=ONE, key=["n"])
@triton.jit
def c(x_ptr, n, BLOCK: tl.constexpr):
    pass

@triton.autotune(configs=ONE, key=["n"])
@triton.jit
def d(x_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew:
    def forward(self, x):
        a[(1,)](x, x.numel())
        b[(1,)](x, x.numel())
        c[(1,)](x, x.numel())
        d[(1,)](x, x.numel())
        return x
)";
  const auto search = find_knobs(source);
  ASSERT_EQ(search.knobs.size(), 3U) << "configs (a, b), BLOCK and num_warps (c, d)";
  EXPECT_EQ(knob_named(search, "configs")->kernels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(knob_named(search, "BLOCK")->kernels, (std::vector<std::string>{"c", "d"}));
  const auto pinned = rewrite_knobs(source, search.knobs, {1, 256, 8});
  EXPECT_NE(
      pinned.find("CONFIGS = [triton.Config({\"BLOCK\": 1024})]\nONE = [triton.Config({\"BLOCK\": 256}, "
                  "num_warps=8)]\n"),
      std::string::npos)
      << pinned;
}

// A list of many configs on one line is delimited in one pass (a cursor that only moves forward). 4,000
// configs (140 KB on one line) take 2-3 s under the sanitizers; a rescan per config would take minutes.
TEST(TunableKnobs, ALongConfigListIsDelimitedInOnePass) {
  std::string configs;
  for (int i = 0; i < 4000; ++i) {
    configs += "triton.Config({'BLOCK': 128}), ";
  }
  const std::string source = "import triton\nimport triton.language as tl\n\n@triton.autotune(configs=[" +
                             configs +
                             "], key=['n'])\n@triton.jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n"
                             "class ModelNew:\n    def forward(self, x):\n        k[(1,)](x, x.numel())\n"
                             "        return x\n";
  const auto search = find_knobs(source);
  ASSERT_EQ(search.knobs.size(), 1U);
  EXPECT_EQ(search.knobs.front().configs.size(), 4000U);
  EXPECT_EQ(search.knobs.front().configs.back(), "triton.Config({'BLOCK': 128})");
}

TEST(TunableKnobs, AnInlineConfigListIsAKnobToo) {
  const std::string source = R"(import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)],
                 key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew:
    def forward(self, x):
        k[(1,)](x, x.numel())
        return x
)";
  const auto search = find_knobs(source);
  ASSERT_EQ(search.knobs.size(), 1U);
  const auto pinned = rewrite_knobs(source, search.knobs, {0});
  EXPECT_NE(pinned.find("@triton.autotune(configs=[triton.Config({\"BLOCK\": 256}, num_warps=4)],\n"),
            std::string::npos)
      << pinned;
  EXPECT_EQ(knob_named(find_knobs(pinned), "BLOCK")->value, 256);
}

constexpr const char* kLaunchOptions = R"(import torch
import triton
import triton.language as tl


@triton.jit
def row_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(torch.nn.Module):
    def forward(self, x, options):
        out = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        warps = min(max(block // 256, 1), 8)
        row_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block, num_warps=(warps if block > 64 else 2))
        row_kernel[(x.shape[0],)](
            x,
            out,
            x.shape[1],
            BLOCK=block,
        )
        row_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=block, **options)
        return out
)";

std::vector<const Knob*> knobs_at(const KnobSearch& search, KnobSite site) {
  std::vector<const Knob*> found;
  for (const auto& knob : search.knobs) {
    if (knob.site == site) {
      found.push_back(&knob);
    }
  }
  return found;
}

// Real kernels compute their warps at run time or leave them to Triton (most of TritonBench's): the
// launch options are knobs there too, since they change how a kernel runs, never what it computes.
TEST(TunableKnobs, LaunchOptionsComputedAtRunTimeOrLeftOutAreKnobs) {
  const auto search = find_knobs(kLaunchOptions);
  const auto run_time = knobs_at(search, KnobSite::run_time);
  ASSERT_EQ(run_time.size(), 1U);
  EXPECT_EQ(run_time[0]->name, "num_warps");
  EXPECT_EQ(run_time[0]->literal, "(warps if block > 64 else 2)");
  EXPECT_EQ(run_time[0]->value, kRunTimeValue);
  EXPECT_EQ(run_time[0]->choices, (std::vector<long long>{kRunTimeValue, 1, 2, 4, 8, 16}));
  const auto absent = knobs_at(search, KnobSite::absent);
  ASSERT_EQ(absent.size(), 3U) << "num_stages of the first launch, both options of the second";
  EXPECT_EQ(absent[1]->name, "num_warps");
  EXPECT_EQ(absent[1]->value, kDefaultNumWarps);
  EXPECT_EQ(absent[2]->value, kDefaultNumStages);
  EXPECT_TRUE(fixed_mentions(search,
                             "num_warps of the launch of row_kernel at 23:9: not given, and a ** "
                             "argument may give it"));
  EXPECT_TRUE(fixed_mentions(search, "BLOCK of the launch of row_kernel at 16:9: computed at run time"));
}

TEST(TunableKnobs, LaunchOptionsAreWrittenInPlaceOrAddedAfterTheLastArgument) {
  const auto search = find_knobs(kLaunchOptions);
  std::vector<long long> values;
  for (const auto& knob : search.knobs) {
    values.push_back(knob.site == KnobSite::literal ? knob.value : knob.kind == KnobKind::num_warps ? 8 : 2);
  }
  const auto rewritten = rewrite_knobs(kLaunchOptions, search.knobs, values);
  EXPECT_NE(rewritten.find("BLOCK=block, num_warps=8, num_stages=2)\n"), std::string::npos) << rewritten;
  EXPECT_NE(rewritten.find("            BLOCK=block, num_warps=8, num_stages=2,\n        )"),
            std::string::npos)
      << "added before the trailing comma: " << rewritten;
  EXPECT_TRUE(source::parse_module(rewritten).ok()) << rewritten;

  std::vector<long long> kept;
  for (const auto& knob : search.knobs) {
    kept.push_back(knob.value);
  }
  EXPECT_EQ(rewrite_knobs(kLaunchOptions, search.knobs, kept), kLaunchOptions)
      << "the start values write the source as it was";
  const auto again = find_knobs(rewritten);
  EXPECT_TRUE(knobs_at(again, KnobSite::run_time).empty());
  EXPECT_TRUE(knobs_at(again, KnobSite::absent).empty());
  EXPECT_EQ(std::count_if(again.knobs.begin(), again.knobs.end(),
                          [](const Knob& knob) { return knob.kind == KnobKind::num_warps; }),
            2)
      << "each launch's num_warps is now a literal of its own";
}

TEST(TunableKnobs, ALaunchWhoseOnlyArgumentIsAGeneratorGetsNoAddedOption) {
  // `k[g](x for x in xs, num_warps=8)` would not parse: a bare generator must be the only argument.
  const auto search = find_knobs(R"(import triton


@triton.jit
def sum_kernel(x_ptr):
    pass


def run(xs):
    sum_kernel[(1,)](x for x in xs)
)");
  EXPECT_TRUE(knobs_at(search, KnobSite::absent).empty());
  EXPECT_TRUE(fixed_mentions(search,
                             "num_warps of the launch of sum_kernel at 10:5: its arguments could not be "
                             "delimited"));
}

TEST(TunableKnobs, AnAutotunedKernelsLaunchGetsNoLaunchOptionKnobs) {
  const auto search = find_knobs(R"(import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, n):
    pass


def run(x):
    tuned_kernel[(1,)](x, x.numel())
)");
  EXPECT_TRUE(knobs_at(search, KnobSite::absent).empty()) << "its configs set warps and stages";
}

// Real wrappers set their tiles in local variables (`BLOCK_M = 128` in the function that launches):
// such a literal is a knob; a local name shadows a module constant of the same name, as in Python.
TEST(TunableKnobs, ALocalLiteralIsAKnobAndShadowsAModuleConstant) {
  constexpr const char* source = R"(import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def tile_kernel(x_ptr, n, BLOCK_M: tl.constexpr, BLOCK: tl.constexpr):
    pass


def attention(x, n, BLOCK_N=64):
    BLOCK_M = 128
    BLOCK = triton.next_power_of_2(n)
    tile_kernel[(triton.cdiv(n, BLOCK_M),)](x, n, BLOCK_M=BLOCK_M, BLOCK=BLOCK, num_warps=4, num_stages=2)
    steps = 2
    steps = 3
    tile_kernel[(1,)](x, n, BLOCK_M=steps, BLOCK=BLOCK_N, num_warps=4, num_stages=2)


def helper(x, n):
    global BLOCK
    tile_kernel[(1,)](x, n, BLOCK_M=16, BLOCK=BLOCK, num_warps=4, num_stages=2)
)";
  const auto search = find_knobs(source);
  const auto* tile = knob_named(search, "BLOCK_M");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->value, 128);
  EXPECT_EQ(tile->where, "local variable BLOCK_M of attention at 13:5");
  EXPECT_TRUE(fixed_mentions(search,
                             "BLOCK of the launch of tile_kernel at 15:5: computed at run time (local "
                             "variable BLOCK of attention at 14:5)"))
      << "the local BLOCK, not the module's";
  EXPECT_TRUE(fixed_mentions(search, "steps is assigned 2 times"));
  EXPECT_TRUE(fixed_mentions(search, "local name BLOCK_N of attention")) << "a parameter: the caller's value";
  const auto* module_block = knob_named(search, "BLOCK");
  ASSERT_NE(module_block, nullptr) << "helper's BLOCK is declared global: the module constant";
  EXPECT_EQ(module_block->where, "module constant BLOCK at 4:1");
  EXPECT_EQ(module_block->kernels, std::vector<std::string>{"tile_kernel"});

  std::vector<long long> values;
  for (const auto& knob : search.knobs) {
    values.push_back(&knob == tile ? 64 : knob.value);
  }
  const auto rewritten = rewrite_knobs(source, search.knobs, values);
  EXPECT_NE(rewritten.find("    BLOCK_M = 64\n"), std::string::npos) << rewritten;
  EXPECT_TRUE(source::parse_module(rewritten).ok());
}

}  // namespace optimize_tunable_knobs_test
}  // namespace kforge::optimize
