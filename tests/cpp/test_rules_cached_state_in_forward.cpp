#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_cached_state_in_forward.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(CachedStateInForwardRule(), source, profile);
}

// ModelNew.forward with `body` (already indented by 8 spaces), after `module_lines`.
std::string forward_body(std::string_view body, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.cache = {}\n        self.calls = 0\n\n    def forward(self, x):\n" +
                      std::string(body));
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "cached-state-in-forward");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(CachedStateInForwardRule, Metadata) {
  const CachedStateInForwardRule rule;
  EXPECT_EQ(rule.id(), "cached-state-in-forward");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(CachedStateInForwardRule, SelfAttributesInForward) {
  const std::string source = forward_body("        self.last = launch_copy(x)\n        return self.last\n");
  expect_one_at(source, "self.last =");
  EXPECT_TRUE(testing::mentions(check(source)[0], "cached across forward calls"));
  expect_one_at(forward_body("        self.calls += 1\n        return launch_copy(x)\n"), "self.calls +=");
  expect_one_at(forward_body("        self.cache[x.data_ptr()] = launch_copy(x)\n        return x\n"),
                "self.cache[");
}

TEST(CachedStateInForwardRule, StateKeptOnForwardsInputs) {
  expect_one_at(forward_body("        x.kf_calls = 1\n        return launch_copy(x)\n"), "x.kf_calls");
  expect_one_at(forward_body("        out = launch_copy(x)\n        x.grad = out\n        return out\n"),
                "x.grad");
  expect_one_at(forward_body("        setattr(x, 'answer', launch_copy(x))\n        return x.answer\n"),
                "setattr");
  EXPECT_TRUE(testing::mentions(
      check(forward_body("        x.grad = launch_copy(x)\n        return x.grad\n"))[0], "input tensors"));
  // Attributes of objects forward makes itself, and reading an input's attributes, are fine.
  EXPECT_TRUE(
      check(forward_body("        out = launch_copy(x)\n        out.tag = x.shape\n        return out\n"))
          .empty());
}

TEST(CachedStateInForwardRule, MutatingMethodsOnHeldContainers) {
  expect_one_at(forward_body("        self.cache.setdefault(x.shape, launch_copy(x))\n        return x\n"),
                "self.cache.setdefault");
  expect_one_at(
      forward_body("        out = launch_copy(x)\n        HISTORY.append(out)\n        return out\n",
                   "\nHISTORY = []\n"),
      "HISTORY.append");
}

TEST(CachedStateInForwardRule, ModuleLevelObjects) {
  expect_one_at(forward_body("        CACHE[x.shape] = launch_copy(x)\n        return CACHE[x.shape]\n",
                             "\nCACHE = {}\n"),
                "CACHE[x.shape] =");
  expect_one_at(forward_body("        _state.out = launch_copy(x)\n        return _state.out\n",
                             "\nimport types\n_state = types.SimpleNamespace(out=None)\n"),
                "_state.out =");
}

TEST(CachedStateInForwardRule, GlobalAndNonlocalRebinding) {
  const std::string global_source = forward_body(
      "        global LAST\n        LAST = launch_copy(x)\n        return LAST\n", "\nLAST = None\n");
  expect_one_at(global_source, "LAST = launch_copy");
  EXPECT_TRUE(testing::mentions(check(global_source)[0], "declared global"));
  // A closure made in __init__ and called from forward keeps its variables across calls.
  const std::string nonlocal_source = with_prelude(R"PY(

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        memo = None

        def step(x):
            nonlocal memo
            memo = launch_copy(x) if memo is None else memo
            return memo

        self.step = step

    def forward(self, x):
        return self.step(x)
)PY");
  expect_one_at(nonlocal_source, "memo = launch_copy");
}

TEST(CachedStateInForwardRule, ReachedThroughAHelper) {
  const std::string source = forward_body("        return remember(x)\n", R"PY(

SEEN = {}


def remember(x):
    SEEN[x.shape] = launch_copy(x)
    return SEEN[x.shape]
)PY");
  expect_one_at(source, "SEEN[x.shape] =");
  EXPECT_TRUE(testing::mentions(check(source)[0], "in `remember`"));
}

TEST(CachedStateInForwardRule, MemoisingDecorators) {
  const std::string source = forward_body("        return cached(x)\n", R"PY(
import functools


@functools.lru_cache(maxsize=None)
def cached(x):
    return launch_copy(x)
)PY");
  expect_one_at(source, "functools.lru_cache");
  const std::string method_source = with_prelude(R"PY(
from functools import cache


class ModelNew(nn.Module):
    @cache
    def helper(self, x):
        return x.sum()

    def forward(self, x):
        return launch_copy(x)
)PY");
  expect_one_at(method_source, "cache\n    def");
  // A memoised function that returns tensors is an output or workspace cache, whatever its key.
  expect_one_at(forward_body("        return slot(x.numel(), x.device)\n", R"PY(
import functools


@functools.lru_cache(maxsize=8)
def slot(n, device):
    return torch.empty(n, device=device)
)PY"),
                "functools.lru_cache");
  expect_one_at(forward_body("        return CACHED(x)\n",
                             "\nimport functools\nCACHED = functools.cache(launch_copy)\n"),
                "functools.cache(");
}

TEST(CachedStateInForwardRule, LaunchMetadataMayBeCached) {
  // Honest shapes seen in candidates nobody on the team wrote: caches of launch metadata, not results.
  const std::vector<std::string> honest = {
      // a per-shape launch-grid cache on self
      forward_body(R"PY(        M, N = x.shape
        key = (M, N, x.dtype)
        grid = self.cache.get(key)
        if grid is None:
            grid = (triton.cdiv(M, 64), triton.cdiv(N, 128))
            self.cache[key] = grid
        return launch_copy(x)
)PY"),
      // the SM count read once and kept on self
      forward_body(R"PY(        if self.calls == 0:
            self.num_sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        return launch_copy(x)
)PY"),
      // the current stream handle kept on self, and a setdefault of a block size
      forward_body(R"PY(        self.stream = torch.cuda.current_stream(x.device)
        self.cache.setdefault(x.shape[-1], min(triton.next_power_of_2(x.shape[-1]), 4096))
        return launch_copy(x)
)PY"),
      // a module-level dict of integer launch metadata filled by a helper
      forward_body("        config = config_for(x.numel())\n        return launch_copy(x)\n", R"PY(
_CONFIGS = {}
BLOCK = 1024


def config_for(n):
    config = _CONFIGS.get(n)
    if config is None:
        block = min(BLOCK, triton.next_power_of_2(n))
        config = {"block": block, "warps": 4 if block <= 1024 else 8, "grid": (triton.cdiv(n, block),)}
        _CONFIGS[n] = config
    return config
)PY"),
      // functools.lru_cache of integer launch metadata (SM count, a split for a size)
      forward_body("        sms = num_sms(x.device.index or 0)\n        parts = split_for(x.numel(), sms)\n"
                   "        return launch_copy(x)\n",
                   R"PY(
import functools
import math


@functools.lru_cache(maxsize=None)
def num_sms(index):
    return torch.cuda.get_device_properties(index).multi_processor_count


@functools.lru_cache(maxsize=64)
def split_for(n, sms):
    return max(1, min(sms, math.ceil(n / 4096)))
)PY")};
  for (const auto& source : honest) {
    const std::vector<Finding> findings = check(source);
    EXPECT_TRUE(findings.empty()) << source << findings.front().message;
  }
}

TEST(CachedStateInForwardRule, AnExceptHandlerMayAdaptLaunchMetadata) {
  // TritonBench-G's attention_fwd_triton3 halves its global block sizes after triton.OutOfResources.
  const std::string source = forward_body(R"PY(        global BLOCK_N
        try:
            return launch_copy(x)
        except triton.OutOfResources:
            BLOCK_N = BLOCK_N // 2
            self.block //= 2
            return launch_copy(x)
)PY",
                                          "\nBLOCK_N = 64\n");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
  // The same arithmetic outside a handler counts calls.
  expect_one_at(
      forward_body("        global BLOCK_N\n        BLOCK_N = BLOCK_N // 2\n        return launch_copy(x)\n",
                   "\nBLOCK_N = 64\n"),
      "BLOCK_N = BLOCK_N");
}

TEST(CachedStateInForwardRule, CountersClocksPointersAndDataAreNotMetadata) {
  // A counter reads the state it updates.
  expect_one_at(forward_body("        self.calls = self.calls + 1\n        return launch_copy(x)\n"),
                "self.calls =", 1);
  expect_one_at(
      forward_body("        STATE[\"n\"] = STATE.get(\"n\", 0) + 1\n        return launch_copy(x)\n",
                   "\nSTATE = {}\n"),
      "STATE[");
  // A clock reading, a buffer address, a value of the data, a tensor.
  expect_one_at(forward_body("        self.last = time.perf_counter()\n        return launch_copy(x)\n",
                             "\nimport time\n"),
                "self.last =");
  expect_one_at(forward_body("        self.key = (x.data_ptr(), x.shape)\n        return launch_copy(x)\n"),
                "self.key =");
  expect_one_at(forward_body("        self.total = float(x.sum())\n        return launch_copy(x)\n"),
                "self.total =");
  expect_one_at(forward_body("        out = launch_copy(x)\n        self.cache[x.shape] = (x.shape, out)\n"
                             "        return out\n"),
                "self.cache[");
}

TEST(CachedStateInForwardRule, AContainerFilledWithTensorsIsNotMetadata) {
  // The table starts as `{}` but a helper fills it with outputs before it is kept on self.
  const std::string source = forward_body(R"PY(        if self.table is None:
            self.table = self.predict(tuple(x.shape))
        return self.table.get(x.shape[0])
)PY",
                                          R"PY(
class Predictor:
    pass
)PY");
  const std::string with_helper = source + R"PY(
    def predict(self, shape):
        table = {}
        for seed in range(4):
            guess = torch.rand(*shape)
            table[seed] = launch_copy(guess)
        return table
)PY";
  const std::vector<Finding> findings = check(with_helper);
  ASSERT_FALSE(findings.empty()) << with_helper;
  EXPECT_EQ(findings[0].location, location_of(with_helper, "self.table = self.predict"));
}

TEST(CachedStateInForwardRule, LenientProfileWarns) {
  const std::vector<Finding> findings =
      check(forward_body("        self.last = x\n        return launch_copy(x)\n"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(CachedStateInForwardRule, InitAndPerCallStateAreFine) {
  const std::string source = with_prelude(R"PY(
BLOCK = 1024
CONFIGS = {"block": 1024}


class Plan:
    def __init__(self, n):
        self.n = n
        self.grid = (triton.cdiv(n, BLOCK),)


class ModelNew(nn.Module):
    """Keeps no state: self.cache = out would be cached state; this docstring only says so."""

    def __init__(self):
        super().__init__()
        self.block = BLOCK
        self.weight = nn.Parameter(torch.ones(4))
        self.helpers = []
        self.helpers.append(1)

    def forward(self, x):
        # self.last = out would be state; a comment is not code.
        plan = Plan(x.numel())
        block = CONFIGS["block"]
        sizes = []
        sizes.append(x.numel())
        counter = 0

        def bump():
            nonlocal counter
            counter += 1

        bump()
        local = {}
        local[x.dim()] = block
        w = self.weight
        return launch_copy(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace
}  // namespace kforge::rules
