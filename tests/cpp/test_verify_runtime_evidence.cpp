#include <gtest/gtest.h>

#include <algorithm>

#include "verify/runtime_evidence.hpp"

namespace kforge::verify {
namespace verify_runtime_evidence_test {

using rules::Severity;

nlohmann::json honest_trace() {
  return {{"own_launches", {{"add_kernel", 1}}},
          {"foreign_launches", nlohmann::json::object()},
          {"side_stream_launches", nlohmann::json::object()},
          {"kernel_arg_dtypes", {"float32"}},
          {"aten_compute_ops", nlohmann::json::object()},
          {"gpu_kernels", nlohmann::json::array()},
          {"gpu_kernel_time_us", 10.0},
          {"own_kernel_time_us", 9.0},
          {"threads_left", nlohmann::json::array()},
          {"children_left", 0}};
}

const rules::Finding* find(const std::vector<rules::Finding>& findings, const std::string& id) {
  const auto found =
      std::find_if(findings.begin(), findings.end(), [&](const auto& f) { return f.rule_id == id; });
  return found == findings.end() ? nullptr : &*found;
}

RuntimeEvidence evidence_of(std::vector<nlohmann::json> traces) {
  RuntimeEvidence evidence;
  evidence.traces = std::move(traces);
  evidence.problem_float_dtypes = {"float32"};
  return evidence;
}

TEST(RuntimeEvidence, HonestTracesGiveNoFinding) {
  const auto evidence = evidence_of({honest_trace(), honest_trace()});
  EXPECT_TRUE(runtime_findings(evidence).empty());
  EXPECT_EQ(evidence.own_launches_per_call(), 1);
}

TEST(RuntimeEvidence, ACallWithoutOwnLaunchesIsRejected) {
  auto skipped = honest_trace();
  skipped["own_launches"] = nlohmann::json::object();
  const auto evidence = evidence_of({honest_trace(), skipped});
  const auto findings = runtime_findings(evidence);
  const auto* finding = find(findings, "triton-kernel-ran");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::reject);
  EXPECT_NE(finding->message.find("call 2"), std::string::npos) << finding->message;
}

TEST(RuntimeEvidence, ALaunchThatRaisedInsideAReturningForwardIsRejected) {
  auto trace = honest_trace();
  trace["failed_launches"] = {{"decoy_kernel", 1}};
  const auto findings = runtime_findings(evidence_of({trace}));
  const auto* finding = find(findings, "kernel-failure-swallowed");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::reject);
  EXPECT_NE(finding->message.find("decoy_kernel x1"), std::string::npos) << finding->message;
}

TEST(RuntimeEvidence, GpuWorkOnAnotherStreamIsRejectedEvenForCopies) {
  auto trace = honest_trace();
  trace["gpu_kernels"] = {
      {{"name", "direct_copy_kernel_cuda"},
       {"count", 1},
       {"own", false},
       {"memory", true},
       {"side_stream", true}},
      {{"name", "add_kernel"}, {"count", 1}, {"own", true}, {"memory", false}, {"side_stream", false}}};
  const auto findings = runtime_findings(evidence_of({trace}));
  const auto* finding = find(findings, "side-stream-gpu-work");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::reject);
  EXPECT_NE(finding->message.find("direct_copy_kernel_cuda x1"), std::string::npos) << finding->message;
  EXPECT_EQ(finding->message.find("add_kernel"), std::string::npos);
}

TEST(RuntimeEvidence, AtenComputeIsRejected) {
  auto trace = honest_trace();
  trace["aten_compute_ops"] = {{"mm", 2}, {"add", 1}};
  const auto evidence = evidence_of({trace});
  const auto strict = runtime_findings(evidence);
  ASSERT_NE(find(strict, "torch-compute-at-runtime"), nullptr);
  EXPECT_EQ(find(strict, "torch-compute-at-runtime")->severity, Severity::reject);
  EXPECT_NE(find(strict, "torch-compute-at-runtime")->message.find("mm x2"), std::string::npos);
}

TEST(RuntimeEvidence, NonTritonGpuKernelsAreFlaggedButFillsAreNot) {
  auto trace = honest_trace();
  trace["gpu_kernels"] = {{{"name", "sm90_xmma_gemm_f32"}, {"count", 1}, {"own", false}, {"memory", false}},
                          {{"name", "fill"}, {"count", 3}, {"own", false}, {"memory", true}},
                          {{"name", "add_kernel"}, {"count", 1}, {"own", true}, {"memory", false}}};
  const auto findings = runtime_findings(evidence_of({trace}));
  const auto* finding = find(findings, "non-triton-gpu-kernel");
  ASSERT_NE(finding, nullptr);
  EXPECT_NE(finding->message.find("sm90_xmma_gemm_f32"), std::string::npos);
  EXPECT_EQ(finding->message.find("fill"), std::string::npos);
}

TEST(RuntimeEvidence, SideStreamsThreadsAndForeignKernelsAreFlagged) {
  auto trace = honest_trace();
  trace["side_stream_launches"] = {{"add_kernel", 1}};
  trace["threads_left"] = {"Thread-1"};
  trace["foreign_launches"] = {{"library_kernel", 1}};
  const auto findings = runtime_findings(evidence_of({trace}));
  EXPECT_NE(find(findings, "side-stream-launch"), nullptr);
  EXPECT_NE(find(findings, "threads-left-alive"), nullptr);
  EXPECT_NE(find(findings, "foreign-triton-kernel"), nullptr);
}

TEST(RuntimeEvidence, HalfKernelArgumentsInAFloat32ProblemAreADowngrade) {
  auto trace = honest_trace();
  trace["kernel_arg_dtypes"] = {"float16", "float32"};
  EXPECT_NE(find(runtime_findings(evidence_of({trace})), "precision-downgrade-runtime"), nullptr);
  auto half_problem = evidence_of({trace});
  half_problem.problem_float_dtypes = {"float16"};
  EXPECT_EQ(find(runtime_findings(half_problem), "precision-downgrade-runtime"), nullptr);
}

TEST(RuntimeEvidence, SteadyStateIgnoresTheFirstCallsAutotuning) {
  auto first = honest_trace();
  first["own_launches"] = {{"add_kernel", 12}};
  first["gpu_kernel_time_us"] = 500.0;
  auto evidence = evidence_of({first, honest_trace()});
  evidence.on_gpu = true;
  EXPECT_EQ(evidence.own_launches_per_call(), 1);
  EXPECT_DOUBLE_EQ(evidence.gpu_kernel_time_us(), 10.0);
  EXPECT_DOUBLE_EQ(evidence.time_coverage().get<double>(), 0.9);
  EXPECT_TRUE(evidence_of({}).time_coverage().is_null());
}

TEST(RuntimeEvidence, ComputeOnlyTheProfilerSawIsRejected) {
  // The dispatch recorder was removed (nothing in aten_compute_ops) but the profiler's C++ view saw it.
  auto hidden = honest_trace();
  hidden["aten_compute_profiled"] = {{"softmax", 1}};
  const auto findings = runtime_findings(evidence_of({honest_trace(), hidden}));
  const auto* finding = find(findings, "torch-compute-at-runtime");
  ASSERT_NE(finding, nullptr);
  EXPECT_NE(finding->message.find("only the profiler saw (softmax x1)"), std::string::npos)
      << finding->message;
}

TEST(RuntimeEvidence, ComputeOfAPrintedTensorIsRejectedAsAPrintNotAsHiddenCompute) {
  auto printed = honest_trace();
  printed["aten_formatting_profiled"] = {{"abs", 2}, {"isfinite", 1}};
  printed["formatted_tensors"] = 1;
  const auto findings = runtime_findings(evidence_of({printed}));
  const auto* finding = find(findings, "torch-compute-at-runtime");
  ASSERT_NE(finding, nullptr);
  EXPECT_NE(finding->message.find("turned 1 tensor(s) into text"), std::string::npos) << finding->message;
  EXPECT_EQ(finding->message.find("hid it"), std::string::npos) << finding->message;
}

TEST(RuntimeEvidence, HostReadsOfInputDataAreRejected) {
  auto host = honest_trace();
  host["host_transfers"] = {{"tolist", 1}};
  const auto findings = runtime_findings(evidence_of({host}));  // the finding points into it
  const auto* finding = find(findings, "host-transfer");
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->severity, Severity::reject);
  EXPECT_NE(finding->message.find("tolist x1"), std::string::npos);
  // Reading a parameter on the host is not input-derived.
  auto parameter = honest_trace();
  parameter["host_transfers_clean"] = 1;
  EXPECT_EQ(find(runtime_findings(evidence_of({parameter})), "host-transfer"), nullptr);
}

TEST(RuntimeEvidence, DeviceToHostCopiesNoConversionExplainsAreRejectedOnAGpu) {
  auto copied = honest_trace();
  copied["gpu_kernels"] = nlohmann::json::array(
      {{{"name", "Memcpy DtoH (Device -> Pageable)"}, {"count", 2}, {"memory", true}, {"own", false}}});
  copied["device_to_host_conversions"] = 1;
  auto evidence = evidence_of({copied});
  evidence.on_gpu = true;
  const auto findings = runtime_findings(evidence);
  const auto* finding = find(findings, "host-transfer");
  ASSERT_NE(finding, nullptr);
  EXPECT_NE(finding->message.find("2 time(s)"), std::string::npos) << finding->message;
  copied["device_to_host_conversions"] = 2;  // every copy is a conversion kforge saw (of a parameter)
  evidence = evidence_of({copied});
  evidence.on_gpu = true;
  EXPECT_EQ(find(runtime_findings(evidence), "host-transfer"), nullptr);
}

TEST(RuntimeEvidence, NonScalarKernelArgumentsAreRejected) {
  auto trace = honest_trace();
  trace["bad_kernel_arguments"] = {{"rowsum_kernel.TABLE: a Tensor passed as tl.constexpr", 1}};
  const auto findings = runtime_findings(evidence_of({trace}));
  const auto* finding = find(findings, "kernel-constexpr-argument");
  ASSERT_NE(finding, nullptr);
  EXPECT_NE(finding->message.find("rowsum_kernel.TABLE"), std::string::npos);
}

TEST(RuntimeEvidence, MalformedTracesNeverThrow) {
  const auto evidence =
      evidence_of({nlohmann::json::object(), nlohmann::json{{"own_launches", "x"}},
                   nlohmann::json{{"threads_left", {1, 2}}, {"gpu_kernels", {{{"count", 1}}}}}});
  EXPECT_NO_THROW(runtime_findings(evidence));
}

}  // namespace verify_runtime_evidence_test
}  // namespace kforge::verify
