#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "problem/kernel_problem.hpp"
#include "test_file_text.hpp"

namespace kforge::problem {
namespace {

constexpr const char* kCode = R"(import torch
import triton
import triton.language as tl

# a short comment line ##########


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out
)";

constexpr const char* kTestBlock =
    R"(######################################################################   
def test_copy():
    return copy(torch.randn(8, device="cuda"))


result_gold = test_copy()
)";

TEST(KernelProblem, TheArgumentsTheReferencesCallWroteAreItsOutputs) {
  EXPECT_EQ(inferred_writes({{2}, true}, "axpy_", "a call"), std::vector<int>{2});
  EXPECT_EQ(inferred_writes({{0, 3}, false}, "f", "a call"), (std::vector<int>{0, 3}));
  EXPECT_TRUE(inferred_writes({{}, false}, "f", "a call").empty());  // it returns its outputs
  try {
    inferred_writes({{}, true}, "f", "the test block's call");
    FAIL() << "a wrapper that returns None and writes nothing has no output";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what())
                  .find("f returned None and wrote none of its tensor arguments in the "
                        "test block's call"),
              std::string::npos);
  }
}

TEST(KernelProblem, AReferenceThatReturnedNoneMakesTheReturnValueNoOutputOnBothSides) {
  EXPECT_EQ(observed_result({{2}, true}), WrapperResult::kIgnored);
  EXPECT_EQ(observed_result({{2}, false}), WrapperResult::kUnlessNone);
  const auto ignored = kernel_candidate_text(kCode, "copy", {1}, {}, WrapperResult::kIgnored);
  EXPECT_NE(ignored.find("_KF_RESULT_IS_OUTPUT = False"), std::string::npos);
  const auto kept = kernel_candidate_text(kCode, "copy", {1});
  EXPECT_NE(kept.find("_KF_RESULT_IS_OUTPUT = True"), std::string::npos);
}

TEST(KernelProblem, TheTestBlockStartsAtALineOfHashesOnly) {
  const auto parts = split_test_block(std::string(kCode) + "\n" + kTestBlock);
  EXPECT_EQ(parts.code, std::string(kCode) + "\n");
  EXPECT_EQ(parts.test_block, kTestBlock);
  const auto none = split_test_block(kCode);
  EXPECT_EQ(none.code, kCode) << "a comment ending in ########## is not a separator";
  EXPECT_TRUE(none.test_block.empty());
}

TEST(KernelProblem, TheCandidateAdapterIsCutFromTheDropInFileAndTheTestBlockPutBack) {
  const auto candidate = kernel_candidate_text(std::string(kCode) + "\n" + kTestBlock, "copy", {1});
  EXPECT_EQ(candidate.find("result_gold"), std::string::npos) << "the test block is not run";
  EXPECT_NE(candidate.find("class ModelNew(torch.nn.Module):"), std::string::npos);
  EXPECT_NE(candidate.find("_KF_WRITES = [1]"), std::string::npos);
  EXPECT_NE(candidate.find("return _kf_call(copy, args)"), std::string::npos);
  const auto drop_in = kernel_drop_in_text(candidate, kTestBlock);
  EXPECT_EQ(drop_in, std::string(kCode) + "\n\n" + kTestBlock);
  EXPECT_EQ(kernel_drop_in_text(kernel_candidate_text(kCode, "copy", {}), ""), kCode);
}

class KernelProblemFiles : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto path = folder_ / name;
    std::ofstream(path) << text;
    return path;
  }
  void SetUp() override {
    folder_ =
        std::filesystem::temp_directory_path() /
        ("kforge-kernel-problem-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::filesystem::path folder_;
};

TEST_F(KernelProblemFiles, TheProblemCallsTheOriginalWrapperOnInputsFromTheSpec) {
  const auto kernel = write("copy.py", std::string(kCode) + "\n" + kTestBlock);
  const auto spec = write("copy.json", R"({"sizes": {"N": 4096}, "small": {"N": 33},
    "inputs": [{"shape": ["N"], "dtype": "float16", "low": -2, "high": 2}]})");
  const auto text = kernel_problem_text({kernel, "copy", spec, {}, std::nullopt});
  EXPECT_EQ(text.find("result_gold"), std::string::npos);
  EXPECT_NE(text.find("N = 4096\n"), std::string::npos);
  EXPECT_NE(text.find("KFORGE_SMALL = {\"N\":33}\n"), std::string::npos);
  EXPECT_NE(text.find("def get_inputs():"), std::string::npos);
  EXPECT_NE(text.find("def get_init_inputs():"), std::string::npos);
  EXPECT_NE(text.find("class Model(torch.nn.Module):"), std::string::npos);
  EXPECT_NE(text.find("return _kf_call(copy, args)"), std::string::npos);

  EXPECT_THROW(kernel_problem_text({kernel, "missing", spec, {}, std::nullopt}), std::invalid_argument);
  EXPECT_THROW(kernel_problem_text({kernel, "copy", std::nullopt, {}, std::nullopt}), std::invalid_argument)
      << "no spec and no get_inputs()";
  EXPECT_THROW(kernel_problem_text({folder_ / "absent.py", "copy", spec, {}, std::nullopt}),
               std::runtime_error);
  const auto bad = write("bad.json", R"({"inputs": [{"shape": [-1], "dtype": "float32"}]})");
  EXPECT_THROW(kernel_problem_text({kernel, "copy", bad, {}, std::nullopt}), std::invalid_argument);
  // A spec in hand (a test block capture) is used before a spec file; its values may be strings or null.
  const auto captured = kernel_problem_text(
      {kernel, "copy", bad, {}, R"({"inputs": [{"shape": [8], "dtype": "float32"}, {"value": "tanh"},
      {"value": null}]})"});
  EXPECT_NE(captured.find(R"({\"value\":\"tanh\"})"), std::string::npos) << captured;
  // A list of scalars is a tuple (or a list), a dict of scalars stays a dict; nested containers are refused.
  const auto window =
      kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": [0, 64]}]})"});
  EXPECT_NE(window.find(R"({\"sequence\":\"tuple\",\"value\":[0,64]})"), std::string::npos) << window;
  EXPECT_THROW(kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": [[1]]}]})"}),
               std::invalid_argument);
  const auto options =
      kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": {"BLOCK": 64}}]})"});
  EXPECT_NE(options.find(R"({\"value\":{\"BLOCK\":64}})"), std::string::npos) << options;
  EXPECT_THROW(
      kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": {"a": [1]}}]})"}),
      std::invalid_argument);
  EXPECT_THROW(kernel_problem_text(
                   {kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": [1], "sequence": "set"}]})"}),
               std::invalid_argument);
  // Integer structure: exact values and the distinct/sorted flags, for integer tensors only.
  const auto indices = kernel_problem_text(
      {kernel,
       "copy",
       std::nullopt,
       {},
       R"({"inputs": [{"shape": [3], "dtype": "int64", "low": 0, "high": 9, "values": [4, 0, 2]},
                      {"shape": [5000], "dtype": "int32", "low": 0, "high": 5000, "unique": true, "sorted": true}]})"});
  EXPECT_NE(indices.find(R"(\"values\":[4,0,2])"), std::string::npos) << indices;
  EXPECT_NE(indices.find(R"(\"unique\":true)"), std::string::npos) << indices;
  EXPECT_THROW(kernel_problem_text({kernel,
                                    "copy",
                                    std::nullopt,
                                    {},
                                    R"({"inputs": [{"shape": [2], "dtype": "float32", "values": [1, 2]}]})"}),
               std::invalid_argument);
  EXPECT_THROW(kernel_problem_text({kernel,
                                    "copy",
                                    std::nullopt,
                                    {},
                                    R"({"inputs": [{"shape": [2], "dtype": "int32", "unique": 1}]})"}),
               std::invalid_argument);
  // Complex tensors are drawn from randn; they carry no integer structure.
  const auto complex = kernel_problem_text(
      {kernel, "copy", std::nullopt, {}, R"({"inputs": [{"shape": [4], "dtype": "complex64"}]})"});
  EXPECT_NE(complex.find("if dtype.is_complex:"), std::string::npos);
  EXPECT_THROW(kernel_problem_text({kernel,
                                    "copy",
                                    std::nullopt,
                                    {},
                                    R"({"inputs": [{"shape": [1], "dtype": "complex64", "values": [1]}]})"}),
               std::invalid_argument);
}

TEST_F(KernelProblemFiles, TheWrapperMayBeAnAutogradFunctionsApplyOrAnAliasOfIt) {
  const auto kernel = write("copy.py", std::string(kCode) + R"(

class Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return copy(x)


copy_fn = Copy.apply
)" + kTestBlock);
  const std::string spec = R"({"inputs": [{"shape": [8], "dtype": "float32"}]})";
  EXPECT_NE(
      kernel_problem_text({kernel, "Copy.apply", std::nullopt, {}, spec}).find("_kf_call(Copy.apply, args)"),
      std::string::npos);
  EXPECT_NE(kernel_problem_text({kernel, "copy_fn", std::nullopt, {}, spec}).find("_kf_call(copy_fn, args)"),
            std::string::npos);
  for (const char* entry : {"Missing.apply", "copy.apply", "Copy.", "Copy.apply()", "Copy.a.b"}) {
    EXPECT_THROW(kernel_problem_text({kernel, entry, std::nullopt, {}, spec}), std::invalid_argument)
        << entry;
  }
}

TEST_F(KernelProblemFiles, DtypeDeviceAndLiteralArgumentsAreCheckedAndMadeAgain) {
  const auto kernel = write("copy.py", std::string(kCode) + "\n" + kTestBlock);
  const auto text =
      kernel_problem_text({kernel,
                           "copy",
                           std::nullopt,
                           {},
                           R"json({"inputs": [{"torch_dtype": "float16"}, {"triton_dtype": "fp8e5"},
                                                        {"device": "cuda:0"}, {"literal": "([1], [0])"}]})json"});
  EXPECT_NE(text.find(R"({\"torch_dtype\":\"float16\"})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({\"triton_dtype\":\"fp8e5\"})"), std::string::npos) << text;
  EXPECT_NE(text.find(R"({\"device\":\"cuda:0\"})"), std::string::npos) << text;
  EXPECT_NE(text.find("triton.language.dtype(spec[\"triton_dtype\"])"), std::string::npos);
  EXPECT_NE(text.find(R"x({\"literal\":\"([1], [0])\"})x"), std::string::npos) << text;
  EXPECT_NE(text.find("ast.literal_eval(spec[\"literal\"])"), std::string::npos);
  for (const char* bad :
       {R"({"inputs": [{"torch_dtype": "float128"}]})", R"({"inputs": [{"triton_dtype": 16}]})",
        R"({"inputs": [{"literal": [[1], [0]]}]})", R"({"inputs": [{"device": null}]})",
        R"({"inputs": [{"torch_dtype": "os.system"}]})"}) {
    EXPECT_THROW(kernel_problem_text({kernel, "copy", std::nullopt, {}, bad}), std::invalid_argument) << bad;
  }
}

TEST_F(KernelProblemFiles, SequenceArgumentsAreCheckedItemByItemAndBuiltAgain) {
  const auto kernel = write("copy.py", std::string(kCode) + "\n" + kTestBlock);
  const auto text =
      kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"sizes": {"N": 4}, "inputs": [{"items": [
          {"shape": ["N"], "dtype": "float32"}, {"shape": [2], "dtype": "int32", "values": [1, 2]},
          {"items": [{"value": 3}], "sequence": "tuple"}]}]})"});
  EXPECT_NE(text.find(R"(\"sequence\":\"list\")"), std::string::npos) << "a list unless it says tuple";
  EXPECT_NE(text.find(R"(\"sequence\":\"tuple\")"), std::string::npos) << text;
  EXPECT_NE(text.find("items = [_kf_input(item) for item in spec[\"items\"]]"), std::string::npos);
  for (const char* bad :
       {R"({"inputs": [{"items": {"a": 1}}]})", R"({"inputs": [{"items": [], "sequence": "set"}]})",
        R"({"inputs": [{"items": [{"shape": [-1], "dtype": "float32"}]}]})",
        R"({"inputs": [{"items": [{"items": [{"items": [{"items": [{"items": []}]}]}]}]}]})"}) {
    EXPECT_THROW(kernel_problem_text({kernel, "copy", std::nullopt, {}, bad}), std::invalid_argument) << bad;
  }
  try {
    kernel_problem_text(
        {kernel, "copy", std::nullopt, {}, R"({"inputs": [{"items": [{"value": 1}, {"dtype": 1}]}]})"});
    FAIL() << "an item without shape and dtype";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("inputs[0][1]"), std::string::npos) << error.what();
  }
}

TEST_F(KernelProblemFiles, ObjectArgumentsAreCheckedAttributeByAttributeAndBuiltAgain) {
  const auto kernel = write("copy.py", std::string(kCode) + "\n" + kTestBlock);
  const auto text =
      kernel_problem_text({kernel,
                           "copy",
                           std::nullopt,
                           {},
                           R"({"inputs": [{"object": "LayerNorm", "torch_nn": true, "parameters": ["weight"],
                       "attributes": {"weight": {"shape": [8], "dtype": "float32", "low": 0.5, "high": 1.5},
                                      "eps": {"value": 1e-5}}},
                      {"object": "Config", "attributes": {"kwargs": {"value": {"BLOCK_M": 64}},
                                                          "inner": {"object": "Inner", "attributes": {}}}}]})"});
  EXPECT_NE(text.find(R"(\"object\":\"LayerNorm\")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(\"parameters\":[\"weight\"])"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(\"torch_nn\":false)"), std::string::npos) << text;
  EXPECT_NE(text.find("from kforge.worker.argument_objects import build"), std::string::npos);
  for (
      const char* bad : {
          R"({"inputs": [{"object": "Config"}]})",
          R"({"inputs": [{"object": 3, "attributes": {}}]})",
          R"({"inputs": [{"object": "os.system", "torch_nn": true, "attributes": {}}]})",
          R"({"inputs": [{"object": "C", "attributes": {"not a name": {"value": 1}}}]})",
          R"({"inputs": [{"object": "C", "attributes": {"w": {"shape": [-1], "dtype": "float32"}}}]})",
          R"({"inputs": [{"object": "C", "attributes": {"w": {"value": 1}}, "parameters": ["v"]}]})",
          R"({"inputs": [{"object": "A", "attributes": {"b": {"object": "B", "attributes": {"c": {"object": "C",
               "attributes": {"d": {"object": "D", "attributes": {"e": {"object": "E", "attributes": {}}}}}}}}}}}]})",
      }) {
    EXPECT_THROW(kernel_problem_text({kernel, "copy", std::nullopt, {}, bad}), std::invalid_argument) << bad;
  }
}

TEST_F(KernelProblemFiles, InputsMarkedAsKeywordsArePassedByNameOnBothSides) {
  const auto kernel = write("copy.py", std::string(kCode) + "\n" + kTestBlock);
  const std::string spec = R"({"inputs": [{"shape": [8], "dtype": "float32"},
                                          {"shape": [8], "dtype": "float32", "keyword": "out"}]})";
  EXPECT_EQ(spec_keywords(spec), (std::map<int, std::string>{{1, "out"}}));
  EXPECT_TRUE(spec_keywords(R"({"inputs": [{"value": 1}]})").empty());
  const auto problem = kernel_problem_text({kernel, "copy", std::nullopt, {1}, spec});
  EXPECT_NE(problem.find("_KF_KEYWORDS = {1: \"out\"}"), std::string::npos) << problem;
  const auto candidate = kernel_candidate_text(kCode, "copy", {1}, spec_keywords(spec));
  EXPECT_NE(candidate.find("_KF_KEYWORDS = {1: \"out\"}"), std::string::npos) << candidate;
  EXPECT_NE(kernel_candidate_text(kCode, "copy", {}).find("_KF_KEYWORDS = {}"), std::string::npos);
  EXPECT_THROW(spec_keywords(R"({"inputs": [{"value": 1, "keyword": "not a name"}]})"),
               std::invalid_argument);
  EXPECT_THROW(
      kernel_problem_text({kernel, "copy", std::nullopt, {}, R"({"inputs": [{"value": 1, "keyword": 3}]})"}),
      std::invalid_argument);
}

TEST(KernelProblem, TheSuitesFirstFileComesBackAsItWas) {
  const auto original = test_support::file_text(std::filesystem::path(KFORGE_SOURCE_DIR) /
                                                "problems/kernels/scaled_add_relu.py");
  const auto parts = split_test_block(original);
  const auto drop_in =
      kernel_drop_in_text(kernel_candidate_text(original, "scaled_add_relu", {}), parts.test_block);
  EXPECT_EQ(drop_in, original);
}

}  // namespace
}  // namespace kforge::problem
