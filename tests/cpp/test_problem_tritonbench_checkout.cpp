#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "problem/tritonbench_checkout.hpp"

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;

const fs::path kCheckout = fs::path(KFORGE_SOURCE_DIR) / "tests" / "fixtures" / "tritonbench";

TEST(TritonBenchCheckout, AnAnswersCodeIsWhatFollowsTheLastPythonFence) {
  EXPECT_EQ(
      tritonbench_answer_code("Sure.\n```python\nold\n```\nBetter:\n```python\nnew()\n```\nDone<|im_end|>"),
      "new()\n");
  EXPECT_EQ(tritonbench_answer_code("```python\nx = 1<|EOT|>"), "x = 1");
  EXPECT_EQ(tritonbench_answer_code("plain = 2\n"), "plain = 2\n");
}

TEST(TritonBenchCheckout, ChannelNames) {
  EXPECT_EQ(parse_tritonbench_channel("G"), TritonBenchChannel::G);
  EXPECT_EQ(parse_tritonbench_channel("t"), TritonBenchChannel::T);
  EXPECT_THROW(parse_tritonbench_channel("X"), std::invalid_argument);
}

TEST(TritonBenchCheckout, WithoutAnswersEveryGoldFileIsItsOwnAnswer) {
  const auto selection = load_tritonbench(kCheckout, TritonBenchChannel::G, {}, {});
  ASSERT_EQ(selection.items.size(), 3U);
  EXPECT_EQ(selection.items.front().name, "rms_norm_rows");
  EXPECT_FALSE(selection.items.front().prediction.has_value());
  EXPECT_EQ(selection.items.front().origin, "gold");
  const auto only = load_tritonbench(kCheckout, TritonBenchChannel::G, {}, {"row_softmax"});
  ASSERT_EQ(only.items.size(), 1U);
  EXPECT_EQ(only.items.front().name, "row_softmax");
}

TEST(TritonBenchCheckout, ChannelGAnswersAreMatchedByTheirLabel) {
  const auto selection =
      load_tritonbench(kCheckout, TritonBenchChannel::G, kCheckout / "predictions_G.jsonl", {});
  ASSERT_EQ(selection.items.size(), 3U);
  EXPECT_TRUE(selection.unmatched.empty());
  EXPECT_EQ(selection.items[0].name, "vector_scale_add");
  EXPECT_EQ(selection.items[0].origin, "predictions_G.jsonl:1");
  ASSERT_TRUE(selection.items[0].prediction.has_value());
  EXPECT_NE(selection.items[0].prediction->find("def vector_scale_add("), std::string::npos);
  EXPECT_EQ(selection.items[0].prediction->find("```"), std::string::npos);
  EXPECT_EQ(selection.items[1].name, "row_softmax");
  EXPECT_EQ(selection.items[2].name, "rms_norm_rows");
}

TEST(TritonBenchCheckout, AChannelGAnswerWhoseLabelIsAnOlderGoldIsMatchedByItsInstruction) {
  // TritonBench's published answers label one item (context_attn_nopad) with an older gold than the
  // checkout's; the instruction still names the item.
  const auto checkout = fs::temp_directory_path() / "kforge-test-tritonbench-instruction";
  fs::remove_all(checkout);
  fs::create_directories(checkout / "data");
  fs::copy(kCheckout / "data" / "TritonBench_G_v1", checkout / "data" / "TritonBench_G_v1");
  std::ofstream(checkout / "data" / "TritonBench_G_v1.json")
      << R"([{"file": "row_softmax.py", "output": "the gold", "comp_instru": "Write a row softmax."},
             {"file": "vector_scale_add.py", "output": "other", "simp_instru": "Scale and add."}])";
  std::ofstream(checkout / "answers.jsonl")
      << R"({"instruction": "You are an expert. Write a row softmax. Answer in Python.", "label": "an old gold", "predict": "x = 1"})"
      << "\n"
      << R"({"instruction": "Write a kernel.", "label": "an old gold", "predict": "x = 2"})"
      << "\n";
  const auto selection = load_tritonbench(checkout, TritonBenchChannel::G, checkout / "answers.jsonl", {});
  ASSERT_EQ(selection.items.size(), 1U);
  EXPECT_EQ(selection.items[0].name, "row_softmax");
  ASSERT_EQ(selection.unmatched.size(), 1U);
  EXPECT_NE(selection.unmatched[0].find("answers.jsonl:2"), std::string::npos);
  fs::remove_all(checkout);
}

TEST(TritonBenchCheckout, ChannelTAnswersAreMatchedByTheirFunctionalDescription) {
  const auto selection =
      load_tritonbench(kCheckout, TritonBenchChannel::T, kCheckout / "predictions_T.jsonl", {});
  ASSERT_EQ(selection.items.size(), 2U);
  EXPECT_TRUE(selection.unmatched.empty());
  EXPECT_EQ(selection.items[0].name, "scaled_gelu");
  EXPECT_EQ(selection.items[1].name, "row_l2_normalize");
}

TEST(TritonBenchCheckout, WhatIsNotACheckoutOrNoItemIsSaid) {
  EXPECT_THROW(load_tritonbench(kCheckout / "data", TritonBenchChannel::G, {}, {}), std::invalid_argument);
  EXPECT_THROW(load_tritonbench(kCheckout, TritonBenchChannel::G, {}, {"absent"}), std::invalid_argument);
  // Channel G answers do not match channel T's items.
  const auto crossed =
      load_tritonbench(kCheckout, TritonBenchChannel::T, kCheckout / "predictions_G.jsonl", {});
  EXPECT_TRUE(crossed.items.empty());
  EXPECT_EQ(crossed.unmatched.size(), 3U);
}

}  // namespace
}  // namespace kforge::problem
