#include "verify/reference_parity.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace kforge::verify {
namespace {

// Triton launches per kernel name, the candidate's own and others alike.
NameCounts triton_launches(const nlohmann::json& trace) {
  NameCounts launches = counts_of(trace, "own_launches");
  for (const auto& [name, count] : counts_of(trace, "foreign_launches")) {
    launches[name] += count;
  }
  return launches;
}

}  // namespace

NameCounts counts_of(const nlohmann::json& trace, const char* key) {
  NameCounts counts;
  const auto found = trace.find(key);
  if (found == trace.end() || !found->is_object()) {
    return counts;
  }
  for (auto item = found->begin(); item != found->end(); ++item) {
    counts[item.key()] = item->is_number_integer() ? item->get<long>() : 1;
  }
  return counts;
}

NameCounts library_kernels(const nlohmann::json& trace) {
  const NameCounts triton = triton_launches(trace);
  NameCounts kernels;
  const auto found = trace.find("gpu_kernels");
  if (found == trace.end() || !found->is_array()) {
    return kernels;
  }
  for (const auto& kernel : *found) {
    const std::string name = kernel.value("name", std::string("?")).substr(0, 120);
    if (!kernel.value("own", false) && !kernel.value("memory", false) && !triton.contains(name)) {
      kernels[name] += kernel.value("count", 1L);
    }
  }
  return kernels;
}

std::optional<ReferenceParity> ReferenceParity::from_trace(const nlohmann::json& trace) {
  const NameCounts launches = triton_launches(trace);  // none in anything but a trace object
  if (std::none_of(launches.begin(), launches.end(), [](const auto& launch) { return launch.second > 0; })) {
    return std::nullopt;
  }
  const long unseen = device_to_host_copies(trace) - trace.value("device_to_host_conversions", 0L);
  return ReferenceParity{counts_of(trace, "aten_compute_ops"),      counts_of(trace, "aten_compute_elements"),
                         counts_of(trace, "aten_compute_profiled"), library_kernels(trace),
                         counts_of(trace, "host_transfers"),        std::max(unseen, 0L),
                         trace.value("formatted_tensors", 0L)};
}

long device_to_host_copies(const nlohmann::json& trace) {
  long copies = 0;
  const auto found = trace.find("gpu_kernels");
  if (found == trace.end() || !found->is_array()) {
    return copies;
  }
  for (const auto& kernel : *found) {
    if (kernel.value("name", std::string()).find("DtoH") != std::string::npos) {
      copies += kernel.value("count", 1L);
    }
  }
  return copies;
}

ParitySplit split_by_reference(const NameCounts& counts, const NameCounts& allowed,
                               const NameCounts* elements, const NameCounts* allowed_elements) {
  ParitySplit split;
  for (const auto& [name, count] : counts) {
    const auto grant = allowed.find(name);
    long covered = grant == allowed.end() ? 0 : std::min(count, grant->second);
    if (covered > 0 && elements != nullptr && allowed_elements != nullptr) {
      const auto took = elements->find(name);
      const auto bound = allowed_elements->find(name);
      const long limit = bound == allowed_elements->end() ? 0 : bound->second;
      if (took != elements->end() && took->second > limit) {
        covered = 0;  // the op ran on more data than the reference's did: not the reference's work
      }
    }
    if (covered > 0) {
      split.covered[name] = covered;
    }
    if (count > covered) {
      split.beyond[name] = count - covered;
    }
  }
  return split;
}

ParitySplit split_formatting(const nlohmann::json& trace, long allowed_formatted_tensors) {
  ParitySplit split;
  // The candidate's process writes its trace: a field of another type counts as many as possible.
  const auto found = trace.is_object() ? trace.find("formatted_tensors") : trace.end();
  const long formatted = found == trace.end()         ? 0L
                         : found->is_number_integer() ? found->get<long>()
                                                      : std::numeric_limits<long>::max();
  (formatted <= allowed_formatted_tensors ? split.covered : split.beyond) =
      counts_of(trace, "aten_formatting_profiled");
  return split;
}

}  // namespace kforge::verify
