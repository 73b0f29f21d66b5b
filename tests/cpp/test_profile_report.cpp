#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "profile/profile_report.hpp"
#include "test_file_text.hpp"

namespace kforge::profile {
namespace {

using test_support::ncu_fixture;

RooflineCeilings h100() {
  return ceilings_from_json(nlohmann::json::parse(ncu_fixture("h100_ceilings.json")));
}

// What kforge.worker.profiler writes for one kernel, with the given SASS counts.
nlohmann::json profiler_output(const std::string& name, nlohmann::json sass, int spills = 0) {
  return {{"device", "NVIDIA H100 80GB HBM3"},
          {"compute_capability", "9.0"},
          {"kernels",
           {{{"name", name},
             {"source_name", name},
             {"launches", 1},
             {"registers", 32},
             {"spilled_registers", spills},
             {"shared_bytes", 0},
             {"num_warps", 8},
             {"num_stages", 3},
             {"sass", std::move(sass)}}}}};
}

nlohmann::json sass_counts(int loads, int wide_loads, nlohmann::json tensor_core = nlohmann::json::object()) {
  return {{"instructions", 200},
          {"global_loads", loads},
          {"global_load_widths", {{"128", wide_loads}, {"32_or_less", loads - wide_loads}}},
          {"global_stores", 1},
          {"global_store_widths", {{"128", 1}}},
          {"async_copies", 0},
          {"tma_copies", 0},
          {"tensor_core", std::move(tensor_core)}};
}

bool mentions(const std::vector<std::string>& findings, const std::string& text) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const std::string& finding) { return finding.find(text) != std::string::npos; });
}

// The H100 profile of the gelu kernel, joined with compiled-kernel facts under `kernel`'s name.
ProfileEvidence gelu_evidence(const std::string& kernel, nlohmann::json sass) {
  ProfileEvidence evidence;
  evidence.ncu = parse_ncu_raw_csv(ncu_fixture("gelu_tanh_raw.csv"));
  evidence.triton = profiler_output_from_json(profiler_output(kernel, std::move(sass)));
  evidence.ceilings = h100();
  return evidence;
}

TEST(ProfileReport, JoinsNcuLaunchesWithTritonsFactsByName) {
  const auto evidence = gelu_evidence("gelu_tanh_kernel", sass_counts(2, 2));
  const auto report = build_profile_report(evidence);
  ASSERT_EQ(report.kernels.size(), 1U);
  const auto& kernel = report.kernels.front();
  EXPECT_EQ(kernel.name, "gelu_tanh_kernel");
  EXPECT_EQ(kernel.launches, static_cast<int>(evidence.ncu->size()));
  ASSERT_TRUE(kernel.triton.has_value());
  EXPECT_EQ(kernel.triton->registers, 32);
  ASSERT_TRUE(kernel.position.has_value());
  EXPECT_EQ(kernel.position->bound, KernelBound::memory);
  ASSERT_TRUE(report.fraction_of_roofline.has_value());
  EXPECT_NEAR(*report.fraction_of_roofline, kernel.position->fraction_of_roofline, 1e-9);
  EXPECT_FALSE(mentions(kernel.diagnosis, "128 bits")) << "its loads are 128-bit";
  EXPECT_TRUE(report.notes.empty());
  const auto document = to_json(report);
  EXPECT_EQ(document["kernels"][0]["roofline"]["bound"], "memory-bound");
  EXPECT_FALSE(document["kernels"][0]["roofline"].contains("diagnosis")) << "the kernel's diagnosis holds it";
  EXPECT_EQ(document["kernels"][0]["triton"]["sass"]["wide_global_loads"], 2);
}

TEST(ProfileReport, NarrowLoadsOfAMemoryBoundKernelAreCalledOut) {
  const auto report = build_profile_report(gelu_evidence("gelu_tanh_kernel", sass_counts(4, 0)));
  EXPECT_TRUE(mentions(report.kernels.front().diagnosis, "none of its 4 global loads is 128 bits wide"));
}

TEST(ProfileReport, SpillsAndWarpLevelMmaOnHopperAreCalledOut) {
  ProfileEvidence evidence;
  evidence.ncu = parse_ncu_raw_csv(ncu_fixture("bmm_bf16_raw.csv"));
  evidence.triton = profiler_output_from_json(
      profiler_output("bmm_kernel", sass_counts(8, 8, {{"HMMA", 64}}), /*spills=*/12));
  evidence.ceilings = h100();
  const auto report = build_profile_report(evidence);
  ASSERT_EQ(report.kernels.size(), 1U);
  const auto& diagnosis = report.kernels.front().diagnosis;
  EXPECT_TRUE(mentions(diagnosis, "12 registers spill")) << diagnosis.size();
  EXPECT_TRUE(mentions(diagnosis, "not Hopper's HGMMA"));
  EXPECT_EQ(report.kernels.front().position->bound, KernelBound::compute);
}

TEST(ProfileReport, AKernelThatIsNotTheCandidatesTritonKernelIsNamedSo) {
  const auto report = build_profile_report(gelu_evidence("some_other_kernel", sass_counts(2, 2)));
  ASSERT_EQ(report.kernels.size(), 1U);
  EXPECT_FALSE(report.kernels.front().triton.has_value());
  EXPECT_TRUE(mentions(report.kernels.front().diagnosis, "not one of the candidate's Triton kernels"));
}

TEST(ProfileReport, WithoutNcuTheKernelsComeFromTritonAndTheReportSaysWhatIsMissing) {
  ProfileEvidence evidence;
  evidence.ncu_unavailable = "--no-ncu was given";
  evidence.triton = profiler_output_from_json(profiler_output("gelu_tanh_kernel", sass_counts(4, 0), 3));
  const auto report = build_profile_report(evidence);
  ASSERT_EQ(report.kernels.size(), 1U);
  EXPECT_EQ(report.kernels.front().launches, 1);
  EXPECT_FALSE(report.kernels.front().position.has_value());
  EXPECT_FALSE(report.fraction_of_roofline.has_value());
  EXPECT_TRUE(mentions(report.notes, "no Nsight Compute profile (--no-ncu was given)"));
  EXPECT_TRUE(mentions(report.kernels.front().diagnosis, "3 registers spill"));
  EXPECT_TRUE(mentions(report.kernels.front().diagnosis, "128 bits")) << "memory may be what limits it";
}

TEST(ProfileReport, MissingCeilingsAndMissingFactsAreNotes) {
  ProfileEvidence evidence;
  evidence.ncu = parse_ncu_raw_csv(ncu_fixture("gelu_tanh_raw.csv"));
  evidence.triton_unavailable = "the profiled run failed (candidate): RuntimeError: boom";
  evidence.ceilings_unavailable = "measuring the ceilings failed";
  const auto report = build_profile_report(evidence);
  ASSERT_EQ(report.kernels.size(), 1U);
  EXPECT_TRUE(report.kernels.front().work.has_value()) << "ncu's numbers stand without Triton's facts";
  EXPECT_FALSE(report.kernels.front().position.has_value());
  EXPECT_TRUE(mentions(report.notes, "RuntimeError: boom"));
  EXPECT_TRUE(mentions(report.notes, "no roofline: measuring the ceilings failed"));
}

TEST(ProfilerOutput, AReportedErrorBecomesItsMessageAndMalformedOutputIsNamed) {
  EXPECT_THROW(
      {
        try {
          profiler_output_from_json({{"error", {{"kind", "candidate"}, {"message", "ValueError: no"}}}});
        } catch (const std::runtime_error& error) {
          EXPECT_NE(std::string(error.what()).find("ValueError: no"), std::string::npos);
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(profiler_output_from_json(nlohmann::json::array()), std::runtime_error);
  EXPECT_THROW(profiler_output_from_json({{"kernels", {{{"registers", 3}}}}}), std::runtime_error);
  const auto no_sass = profiler_output_from_json(
      {{"kernels", {{{"name", "k"}, {"sass", nullptr}, {"sass_unavailable", "cuobjdump not found"}}}}});
  EXPECT_FALSE(no_sass.kernels.front().sass.has_value());
  EXPECT_EQ(no_sass.kernels.front().sass_unavailable, "cuobjdump not found");
}

}  // namespace
}  // namespace kforge::profile
