#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "source/code_extraction.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

// Hostile inputs must give an answer (a tree or an error), never a crash or a hang.
namespace kforge::source {
namespace {

constexpr std::string_view kSeed = R"PY(import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"B": 64})], key=["n"])
@triton.jit
def kernel(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

class ModelNew:
    def forward(self, x, *, scale: float = 1.0):
        grid = lambda m: (triton.cdiv(x.numel(), m["B"]),)
        kernel[grid](x, x.numel())
        return {f"{k!r:>{w}}": [v for v in x if (v := v)] for k, w in {}.items()}
)PY";

// Parses and, when that succeeds, indexes the input.
void analyse(std::string_view input) {
  const ParseResult parsed = parse_module(input);
  if (parsed.ok()) {
    static_cast<void>(build_module_index(*parsed.module));
  } else {
    EXPECT_FALSE(parsed.error->message.empty());
    EXPECT_GE(parsed.error->location.line, 1);
    EXPECT_GE(parsed.error->location.column, 1);
  }
  static_cast<void>(extract_code(input));
}

TEST(Robustness, SeedProgramIsValid) {
  const ParseResult parsed = parse_module(kSeed);
  ASSERT_TRUE(parsed.ok()) << parsed.error->message << " at " << parsed.error->location;
  EXPECT_EQ(build_module_index(*parsed.module).launched_kernels(), (std::vector<std::string>{"kernel"}));
}

TEST(Robustness, RandomMutationsOfAValidProgram) {
  constexpr std::string_view kAlphabet = "()[]{}:;,.=*'\"\\\n\t #@+-<>!~0123456789abfrjxe_\xC3\xA9\x80\xFF";
  std::mt19937 generator(12345U);
  // 600 rounds here (about 10 s under the sanitizers); the fuzz target explores the same space without end.
  for (int round = 0; round < 600; ++round) {
    std::string input(kSeed);
    const int edits = 1 + static_cast<int>(generator() % 4U);
    for (int edit = 0; edit < edits && !input.empty(); ++edit) {
      const std::size_t at = generator() % input.size();
      if (generator() % 2U == 0U) {
        input.erase(at, 1 + generator() % 3U);
      } else {
        input.insert(at, 1, kAlphabet[generator() % kAlphabet.size()]);
      }
    }
    analyse(input);
  }
}

TEST(Robustness, PathologicalInputs) {
  const std::vector<std::string> inputs = {
      std::string(100000, '('),
      std::string(100000, ')'),
      std::string(100000, '"'),
      std::string(100000, '\''),
      std::string(50000, '\\'),
      "f'" + std::string(10000, '{'),
      "f'" + std::string(10000, '{') + std::string(10000, '}') + "'",
      [] {
        std::string nested = "x";
        for (int i = 0; i < 300; ++i) {
          nested.insert(0, "f'{");
          nested += "}'";
        }
        return nested;
      }(),
      [] {
        std::string nested = "x";
        for (int i = 0; i < 300; ++i) {
          nested.insert(0, "f\"{");
          nested += "}\"";
        }
        return nested;
      }(),
      std::string(100000, '-') + "1",
      std::string(100000, '@') + "\ndef f(): pass",
      std::string(10000, '\t') + "x",
      "x = " + std::string(200000, '1'),
      "if x:\n" + std::string(100000, ' ') + "y\n",
      std::string(100000, '\n'),
      "a" + std::string(50000, '.'),
      "match x:\n    case " + std::string(5000, '[') + "\n",
      "def f(" + std::string(5000, '*') + "): pass",
      "lambda " + std::string(5000, ',') + ": 0",
      "x = [" + std::string(100000, ',') + "]",
      "class " + std::string(5000, 'A') + "(" + std::string(5000, 'B') + "): pass",
  };
  for (const std::string& input : inputs) {
    analyse(input);
  }
}

TEST(Robustness, EveryByteValueAlone) {
  for (int value = 0; value < 256; ++value) {
    const char byte = static_cast<char>(value);
    analyse(std::string(1, byte));
    analyse("x = " + std::string(1, byte) + "\n");
    analyse("'" + std::string(1, byte) + "'");
    analyse("f'{" + std::string(1, byte) + "}'");
  }
}

}  // namespace
}  // namespace kforge::source
