#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "verify/reference_parity.hpp"
#include "verify/runtime_evidence.hpp"

namespace kforge::verify {
namespace {

using rules::Severity;

// A traced call: one Triton launch, then `aten` ops (with the largest tensor each took) and GPU kernels.
nlohmann::json trace_with(const std::string& launches_key, const NameCounts& aten, const NameCounts& elements,
                          const NameCounts& kernels = {}, const NameCounts& host_reads = {}) {
  nlohmann::json gpu = nlohmann::json::array();
  gpu.push_back(
      {{"name", "row_kernel"}, {"count", 1}, {"own", launches_key == "own_launches"}, {"memory", false}});
  for (const auto& [name, count] : kernels) {
    gpu.push_back({{"name", name}, {"count", count}, {"own", false}, {"memory", false}});
  }
  nlohmann::json trace = {{"own_launches", nlohmann::json::object()},
                          {"foreign_launches", nlohmann::json::object()},
                          {"aten_compute_ops", aten},
                          {"aten_compute_elements", elements},
                          {"gpu_kernels", gpu},
                          {"host_transfers", host_reads}};
  trace[launches_key] = {{"row_kernel", 1}};
  return trace;
}

const rules::Finding* find(const std::vector<rules::Finding>& findings, const std::string& id) {
  const auto found =
      std::find_if(findings.begin(), findings.end(), [&](const auto& f) { return f.rule_id == id; });
  return found == findings.end() ? nullptr : &*found;
}

RuntimeEvidence candidate_evidence(const nlohmann::json& reference_trace,
                                   std::vector<nlohmann::json> traces) {
  RuntimeEvidence evidence;
  evidence.traces = std::move(traces);
  evidence.on_gpu = true;
  evidence.reference = ReferenceParity::from_trace(reference_trace);
  return evidence;
}

const NameCounts kSumAndDiv{{"sum", 1}, {"div", 1}};
const NameCounts kSmallTensors{{"sum", 64}, {"div", 1}};
const NameCounts kReduceKernel{{"reduce_kernel<sum>", 1}};

TEST(ReferenceParity, AReferenceWithoutTritonLaunchesGrantsNothing) {
  nlohmann::json pytorch_reference = trace_with("own_launches", kSumAndDiv, kSmallTensors);
  pytorch_reference["own_launches"] = nlohmann::json::object();
  EXPECT_FALSE(ReferenceParity::from_trace(pytorch_reference).has_value());
  EXPECT_FALSE(ReferenceParity::from_trace(nlohmann::json::array()).has_value());
}

TEST(ReferenceParity, ReadsTheReferencesWorkAndLeavesItsTritonKernelsOut) {
  const auto parity =
      ReferenceParity::from_trace(trace_with("foreign_launches", kSumAndDiv, kSmallTensors, kReduceKernel));
  ASSERT_TRUE(parity.has_value());
  EXPECT_EQ(parity->aten_ops, kSumAndDiv);
  EXPECT_EQ(parity->aten_elements, kSmallTensors);
  EXPECT_EQ(parity->gpu_kernels, kReduceKernel);  // row_kernel is the reference's Triton kernel
}

TEST(ReferenceParity, SplitCoversUpToTheAllowedCountOnTensorsNoLarger) {
  const NameCounts allowed{{"sum", 1}};
  const NameCounts allowed_elements{{"sum", 64}};
  const auto within = split_by_reference({{"sum", 1}}, allowed, &allowed_elements, &allowed_elements);
  EXPECT_TRUE(within.beyond.empty());
  EXPECT_EQ(within.covered, (NameCounts{{"sum", 1}}));

  const auto twice = split_by_reference({{"sum", 2}, {"mul", 1}}, allowed);
  EXPECT_EQ(twice.beyond, (NameCounts{{"sum", 1}, {"mul", 1}}));
  EXPECT_EQ(twice.covered, (NameCounts{{"sum", 1}}));

  const NameCounts larger{{"sum", 12'800}};
  const auto on_more_data = split_by_reference({{"sum", 1}}, allowed, &larger, &allowed_elements);
  EXPECT_EQ(on_more_data.beyond, (NameCounts{{"sum", 1}}));
  EXPECT_TRUE(on_more_data.covered.empty());
}

TEST(ReferenceParity, TheReferencesOwnPyTorchWorkIsAllowedAndReported) {
  const auto reference = trace_with("foreign_launches", kSumAndDiv, kSmallTensors, kReduceKernel);
  const auto same = trace_with("own_launches", kSumAndDiv, kSmallTensors, kReduceKernel);
  const auto findings = runtime_findings(candidate_evidence(reference, {same, same}));
  EXPECT_EQ(find(findings, "torch-compute-at-runtime"), nullptr);
  EXPECT_EQ(find(findings, "non-triton-gpu-kernel"), nullptr);
  const auto* parity = find(findings, "reference-parity");
  ASSERT_NE(parity, nullptr);
  EXPECT_EQ(parity->severity, Severity::warn);
  EXPECT_NE(parity->message.find("sum x2"), std::string::npos) << parity->message;
}

TEST(ReferenceParity, WorkBeyondTheReferencesIsRejected) {
  const auto reference = trace_with("foreign_launches", kSumAndDiv, kSmallTensors, kReduceKernel);
  const auto more = trace_with("own_launches", {{"sum", 1}, {"div", 1}, {"mul", 1}},
                               {{"sum", 12'800}, {"div", 1}, {"mul", 12'800}},
                               {{"reduce_kernel<sum>", 1}, {"gemm_kernel", 1}});
  const auto findings = runtime_findings(candidate_evidence(reference, {more}));
  const auto* compute = find(findings, "torch-compute-at-runtime");
  ASSERT_NE(compute, nullptr);
  EXPECT_NE(compute->message.find("beyond what the reference"), std::string::npos);
  EXPECT_NE(compute->message.find("mul x1"), std::string::npos) << compute->message;
  EXPECT_NE(compute->message.find("sum x1"), std::string::npos) << compute->message;  // on more data
  const auto* kernels = find(findings, "non-triton-gpu-kernel");
  ASSERT_NE(kernels, nullptr);
  EXPECT_NE(kernels->message.find("gemm_kernel"), std::string::npos);
  EXPECT_EQ(kernels->message.find("reduce_kernel"), std::string::npos) << kernels->message;
}

TEST(ReferenceParity, HostReadsCountAgainstTheReferencesOwn) {
  const auto reference = trace_with("foreign_launches", {}, {}, {}, {{"item", 1}});
  const auto once = trace_with("own_launches", {}, {}, {}, {{"item", 1}});
  EXPECT_EQ(find(runtime_findings(candidate_evidence(reference, {once})), "host-transfer"), nullptr);
  const auto thrice = trace_with("own_launches", {}, {}, {}, {{"item", 3}, {"tolist", 1}});
  EXPECT_NE(find(runtime_findings(candidate_evidence(reference, {thrice})), "host-transfer"), nullptr);
}

TEST(ReferenceParity, CopiesToTheHostTheReferenceMakesUnseenAreAllowedToo) {
  // A gold file that prints its tensors copies them to the host without a conversion kforge sees.
  auto reference = trace_with("foreign_launches", {}, {});
  reference["gpu_kernels"].push_back(
      {{"name", "Memcpy DtoH (Device -> Pageable)"}, {"count", 5}, {"memory", true}});
  reference["device_to_host_conversions"] = 1;
  const auto parity = ReferenceParity::from_trace(reference);
  ASSERT_TRUE(parity.has_value());
  EXPECT_EQ(parity->unseen_copies_to_host, 4);
  auto candidate = trace_with("own_launches", {}, {});
  candidate["gpu_kernels"].push_back(
      {{"name", "Memcpy DtoH (Device -> Pageable)"}, {"count", 5}, {"memory", true}});
  candidate["device_to_host_conversions"] = 1;
  EXPECT_EQ(find(runtime_findings(candidate_evidence(reference, {candidate})), "host-transfer"), nullptr);
  candidate["gpu_kernels"].back()["count"] = 6;
  const auto findings = runtime_findings(candidate_evidence(reference, {candidate}));
  const auto* more = find(findings, "host-transfer");
  ASSERT_NE(more, nullptr);
  EXPECT_NE(more->message.find("copies 4 time(s) more"), std::string::npos) << more->message;
}

TEST(ReferenceParity, PrintsAreAllowedPerFormattedTensorWhateverOpsTheValuesTake) {
  // How many ops torch runs to format a tensor depends on its values (NaN, integers, the scale), so a
  // print of the candidate's trial values need not run the ops the reference's print ran.
  auto reference = trace_with("foreign_launches", {}, {});
  reference["formatted_tensors"] = 2;
  reference["aten_formatting_profiled"] = {{"abs", 2}};
  const auto parity = ReferenceParity::from_trace(reference);
  ASSERT_TRUE(parity.has_value());
  EXPECT_EQ(parity->formatted_tensors, 2);
  auto candidate = trace_with("own_launches", {}, {});
  candidate["formatted_tensors"] = 2;
  candidate["aten_formatting_profiled"] = {{"gt", 6}, {"lt", 6}, {"isfinite", 2}};
  const auto allowed = runtime_findings(candidate_evidence(reference, {candidate}));
  EXPECT_EQ(find(allowed, "torch-compute-at-runtime"), nullptr);
  const auto* parity_note = find(allowed, "reference-parity");
  ASSERT_NE(parity_note, nullptr);
  EXPECT_NE(parity_note->message.find("printing tensors gt x6"), std::string::npos) << parity_note->message;
  candidate["formatted_tensors"] = 3;
  const auto findings = runtime_findings(candidate_evidence(reference, {candidate}));
  const auto* more = find(findings, "torch-compute-at-runtime");
  ASSERT_NE(more, nullptr);
  EXPECT_NE(more->message.find("turned 3 tensor(s) into text"), std::string::npos) << more->message;
  EXPECT_NE(more->message.find("the reference formats 2 per call"), std::string::npos) << more->message;
}

TEST(ReferenceParity, WithoutAReferenceEveryPyTorchOpIsRejectedAsBefore) {
  RuntimeEvidence evidence;
  evidence.traces = {trace_with("own_launches", kSumAndDiv, kSmallTensors)};
  EXPECT_TRUE(evidence.ran_pytorch_work());
  const auto findings = runtime_findings(evidence);
  ASSERT_NE(find(findings, "torch-compute-at-runtime"), nullptr);
  EXPECT_EQ(find(findings, "reference-parity"), nullptr);
  evidence.traces = {trace_with("own_launches", {}, {})};
  EXPECT_FALSE(evidence.ran_pytorch_work());
}

}  // namespace
}  // namespace kforge::verify
