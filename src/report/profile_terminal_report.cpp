#include "report/profile_terminal_report.hpp"

#include <fmt/format.h>

namespace kforge::report {
namespace {

std::string optional_number(const nlohmann::json& object, const char* key, const char* format_spec) {
  const auto found = object.is_object() ? object.find(key) : object.end();
  if (!object.is_object() || found == object.end() || !found->is_number()) {
    return "-";
  }
  return fmt::format(fmt::runtime(format_spec), found->get<double>());
}

std::string time_text(double seconds) {
  return seconds >= 1e-3 ? fmt::format("{:.3f} ms", seconds * 1e3) : fmt::format("{:.1f} us", seconds * 1e6);
}

std::string measured_columns(const nlohmann::json& kernel) {
  const auto& work = kernel["per_launch"];
  const auto& roofline = kernel["roofline"];
  if (!work.is_object()) {
    return fmt::format("{:>8} {:>11} {:>14} {:>15} {:>15}", kernel.value("launches", 0), "-", "-", "-", "-");
  }
  const double seconds = work.value("seconds", 0.0);
  const std::string bandwidth =
      seconds > 0 ? fmt::format("{:.0f} GB/s", work.value("dram_bytes", 0.0) / seconds / 1e9) : "-";
  const std::string rate =
      seconds > 0 ? fmt::format("{:.1f} TFLOP/s", work.value("flops", 0.0) / seconds / 1e12) : "-";
  return fmt::format("{:>8} {:>11} {:>14} {:>15} {:>15}", kernel.value("launches", 0), time_text(seconds),
                     bandwidth, rate,
                     roofline.is_object() ? fmt::format("{} {:.0f}%", roofline.value("bound", ""),
                                                        100 * roofline.value("fraction_of_roofline", 0.0))
                                          : "-");
}

std::string compiled_columns(const nlohmann::json& kernel) {
  const auto& triton = kernel["triton"];
  if (!triton.is_object()) {
    return "not a Triton kernel of the candidate";
  }
  std::string text = fmt::format(
      "regs {} spills {} warps {} stages {} smem {}", optional_number(triton, "registers", "{:.0f}"),
      optional_number(triton, "spilled_registers", "{:.0f}"), optional_number(triton, "num_warps", "{:.0f}"),
      optional_number(triton, "num_stages", "{:.0f}"), optional_number(triton, "shared_bytes", "{:.0f}"));
  const auto& sass = triton["sass"];
  if (sass.is_object()) {
    std::string tensor;
    const auto tensor_core = sass.value("tensor_core", nlohmann::json::object());
    for (const auto& [family, count] : tensor_core.items()) {
      tensor += fmt::format(" {}×{}", family, count.get<int>());
    }
    text += fmt::format(" | SASS: {}/{} loads 128-bit{}{}{}", sass.value("wide_global_loads", 0),
                        sass.value("global_loads", 0),
                        sass.value("async_copies", 0) > 0
                            ? fmt::format(", cp.async×{}", sass.value("async_copies", 0))
                            : std::string(),
                        sass.value("tma_copies", 0) > 0 ? fmt::format(", TMA×{}", sass.value("tma_copies", 0))
                                                        : std::string(),
                        tensor.empty() ? std::string(", no tensor cores") : "," + tensor);
  } else {
    text += fmt::format(" | no SASS: {}", triton.value("sass_unavailable", ""));
  }
  return text;
}

}  // namespace

std::string render_profile(const nlohmann::json& profile) {
  std::string out;
  const auto& verdict = profile["verdict"];
  out += fmt::format("{}\n", verdict.is_object() ? verdict.value("summary", "") : "");
  const auto& device = profile["device"];
  if (device.is_object()) {
    out += fmt::format("device: {}\n", device.value("name", device.value("device", "")));
  }
  const auto& ncu = profile["ncu"];
  out += ncu.is_object() && ncu.value("used", false)
             ? fmt::format("Nsight Compute: {}\n", ncu.value("path", ""))
             : std::string();
  const auto& ceilings = profile["ceilings"];
  if (ceilings.is_object()) {
    out += fmt::format(
        "roofline of {}: {:.2f} TB/s copy, {:.0f} TFLOP/s bf16, {:.0f} fp16, {:.0f} tf32, {:.0f} fp32\n",
        ceilings.value("device", ""), ceilings.value("dram_bytes_per_s", 0.0) / 1e12,
        ceilings.value("bf16_flop_per_s", 0.0) / 1e12, ceilings.value("fp16_flop_per_s", 0.0) / 1e12,
        ceilings.value("tf32_flop_per_s", 0.0) / 1e12, ceilings.value("fp32_flop_per_s", 0.0) / 1e12);
  }
  const auto& kernels = profile["kernels"];
  if (kernels.is_array() && !kernels.empty()) {
    out += fmt::format("\n{:<32} {:>8} {:>11} {:>14} {:>15} {:>15}\n", "kernel", "launches", "time/launch",
                       "DRAM", "arithmetic", "bound");
    for (const auto& kernel : kernels) {
      const auto name = kernel.value("name", "");
      out += fmt::format("{:<32} {}\n", name.size() > 32 ? name.substr(0, 31) + "…" : name,
                         measured_columns(kernel));
      out += fmt::format("    {}\n", compiled_columns(kernel));
      for (const auto& finding : kernel.value("diagnosis", nlohmann::json::array())) {
        out += fmt::format("    - {}\n", finding.get<std::string>());
      }
    }
  }
  if (const auto& fraction = profile["fraction_of_roofline"]; fraction.is_number()) {
    out +=
        fmt::format("\nkernels at {:.0f}% of the roofline (time-weighted)\n", 100 * fraction.get<double>());
  }
  for (const auto& note : profile.value("notes", nlohmann::json::array())) {
    out += fmt::format("note: {}\n", note.get<std::string>());
  }
  return out;
}

}  // namespace kforge::report
