#include "profile/triton_kernel_facts.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kforge::profile {
namespace {

std::optional<int> optional_int(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_integer()) {
    return std::nullopt;
  }
  return found->get<int>();
}

int width_count(const nlohmann::json& widths, std::initializer_list<const char*> keys) {
  int total = 0;
  for (const char* key : keys) {
    total += widths.value(key, 0);
  }
  return total;
}

SassSummary sass_from_json(const nlohmann::json& sass) {
  SassSummary summary;
  summary.instructions = sass.value("instructions", 0);
  summary.global_loads = sass.value("global_loads", 0);
  summary.global_stores = sass.value("global_stores", 0);
  const auto empty = nlohmann::json::object();
  summary.wide_global_loads = width_count(sass.value("global_load_widths", empty), {"128", "256"});
  summary.wide_global_stores = width_count(sass.value("global_store_widths", empty), {"128", "256"});
  summary.async_copies = sass.value("async_copies", 0);
  summary.tma_copies = sass.value("tma_copies", 0);
  const auto tensor_core = sass.value("tensor_core", empty);
  for (const auto& [family, count] : tensor_core.items()) {
    if (count.is_number_integer()) {
      summary.tensor_core[family] = count.get<int>();
    }
  }
  return summary;
}

TritonKernelFacts kernel_from_json(const nlohmann::json& kernel) {
  if (!kernel.is_object() || !kernel.contains("name") || !kernel["name"].is_string()) {
    throw std::runtime_error(R"(profiler output: each entry of "kernels" needs a string "name")");
  }
  TritonKernelFacts facts;
  facts.name = kernel["name"].get<std::string>();
  facts.source_name = kernel.value("source_name", facts.name);
  facts.launches = kernel.value("launches", 0);
  facts.registers = optional_int(kernel, "registers");
  facts.spilled_registers = optional_int(kernel, "spilled_registers");
  facts.shared_bytes = optional_int(kernel, "shared_bytes");
  facts.num_warps = optional_int(kernel, "num_warps");
  facts.num_stages = optional_int(kernel, "num_stages");
  if (const auto sass = kernel.find("sass"); sass != kernel.end() && sass->is_object()) {
    facts.sass = sass_from_json(*sass);
  } else {
    facts.sass_unavailable = kernel.value("sass_unavailable", std::string("no SASS in the profiler output"));
  }
  return facts;
}

}  // namespace

int SassSummary::tensor_core_total() const {
  int total = 0;
  for (const auto& [family, count] : tensor_core) {
    total += count;
  }
  return total;
}

ProfilerOutput profiler_output_from_json(const nlohmann::json& document) {
  if (!document.is_object()) {
    throw std::runtime_error("profiler output: expected a JSON object");
  }
  if (const auto error = document.find("error"); error != document.end()) {
    throw std::runtime_error(fmt::format("the profiled run failed ({}): {}",
                                         error->value("kind", std::string("unknown")),
                                         error->value("message", std::string("no message"))));
  }
  const auto kernels = document.find("kernels");
  if (kernels == document.end() || !kernels->is_array()) {
    throw std::runtime_error("profiler output: expected a \"kernels\" array");
  }
  ProfilerOutput output;
  output.device = document.value("device", std::string());
  output.compute_capability = document.value("compute_capability", std::string());
  for (const auto& kernel : *kernels) {
    output.kernels.push_back(kernel_from_json(kernel));
  }
  return output;
}

nlohmann::json to_json(const TritonKernelFacts& facts) {
  auto optional = [](const std::optional<int>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json document = {{"source_name", facts.source_name},
                             {"registers", optional(facts.registers)},
                             {"spilled_registers", optional(facts.spilled_registers)},
                             {"shared_bytes", optional(facts.shared_bytes)},
                             {"num_warps", optional(facts.num_warps)},
                             {"num_stages", optional(facts.num_stages)}};
  if (facts.sass) {
    const auto& sass = *facts.sass;
    document["sass"] = {{"instructions", sass.instructions},
                        {"global_loads", sass.global_loads},
                        {"wide_global_loads", sass.wide_global_loads},
                        {"global_stores", sass.global_stores},
                        {"wide_global_stores", sass.wide_global_stores},
                        {"async_copies", sass.async_copies},
                        {"tma_copies", sass.tma_copies},
                        {"tensor_core", sass.tensor_core}};
  } else {
    document["sass"] = nullptr;
    document["sass_unavailable"] = facts.sass_unavailable;
  }
  return document;
}

}  // namespace kforge::profile
