#include "verify/runtime_evidence.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "verify/no_location.hpp"

namespace kforge::verify {
namespace {

using rules::Finding;
using rules::Severity;

// name -> total count of a {"name": count} object, summed over every trace.
NameCounts summed_counts(const std::vector<nlohmann::json>& traces, const char* key) {
  NameCounts totals;
  for (const auto& trace : traces) {
    for (const auto& [name, count] : counts_of(trace, key)) {
      totals[name] += count;
    }
  }
  return totals;
}

long summed_number(const std::vector<nlohmann::json>& traces, const char* key) {
  long total = 0;
  for (const auto& trace : traces) {
    const auto found = trace.find(key);
    total += found != trace.end() && found->is_number_integer() ? found->get<long>() : 0;
  }
  return total;
}

std::string listed(const std::map<std::string, long>& counts, std::size_t limit = 8) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) {
    if (parts.size() == limit) {
      parts.emplace_back("...");
      break;
    }
    parts.push_back(fmt::format("{} x{}", name, count));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

long own_total(const nlohmann::json& trace) {
  const auto found = trace.find("own_launches");
  if (found == trace.end() || !found->is_object()) {
    return 0;
  }
  long total = 0;
  for (const auto& count : *found) {
    total += count.is_number_integer() ? count.get<long>() : 0;
  }
  return total;
}

// The traces that describe a steady-state call: all but the first when there are several.
std::vector<const nlohmann::json*> steady_traces(const std::vector<nlohmann::json>& traces) {
  std::vector<const nlohmann::json*> steady;
  for (std::size_t i = traces.size() > 1 ? 1 : 0; i < traces.size(); ++i) {
    steady.push_back(&traces[i]);
  }
  return steady;
}

void check_own_kernels_ran(const RuntimeEvidence& evidence, std::vector<Finding>& findings) {
  for (std::size_t i = 0; i < evidence.traces.size(); ++i) {
    if (own_total(evidence.traces[i]) == 0) {
      findings.push_back(
          {"triton-kernel-ran", Severity::reject,
           fmt::format("call {} of forward launched none of the candidate's own Triton kernels: "
                       "the result came from somewhere else",
                       i + 1),
           kNoLocation});
      return;
    }
  }
}

// Traces come from forwards that returned normally, so a launch that raised was caught by the
// candidate, which then produced its outputs some other way.
void check_swallowed_failures(const RuntimeEvidence& evidence, std::vector<Finding>& findings) {
  const auto failed = summed_counts(evidence.traces, "failed_launches");
  if (!failed.empty()) {
    findings.push_back({"kernel-failure-swallowed", Severity::reject,
                        "Triton launches raised (" + listed(failed) +
                            ") yet forward returned outputs: a fallback computed them instead of the kernels",
                        kNoLocation});
  }
}

// Per kind of work, what the candidate's calls ran beyond its Triton reference's own PyTorch work (all of
// it when the reference is not a Triton program), and what that work covered.
struct PyTorchWork {
  ParitySplit aten;
  ParitySplit profiled;
  ParitySplit formatting;  // ops of formatting tensors as text (prints), allowed per formatted tensor
  ParitySplit kernels;
  ParitySplit host_reads;
};

void add_split(ParitySplit& total, const ParitySplit& one) {
  for (const auto& [name, count] : one.beyond) {
    total.beyond[name] += count;
  }
  for (const auto& [name, count] : one.covered) {
    total.covered[name] += count;
  }
}

PyTorchWork pytorch_work(const std::vector<nlohmann::json>& traces, const ReferenceParity* reference) {
  const ReferenceParity nothing;  // a PyTorch reference, or none traced: no allowance
  const ReferenceParity& allowed = reference != nullptr ? *reference : nothing;
  PyTorchWork work;
  for (const auto& trace : traces) {
    const NameCounts elements = counts_of(trace, "aten_compute_elements");
    add_split(work.aten, split_by_reference(counts_of(trace, "aten_compute_ops"), allowed.aten_ops, &elements,
                                            &allowed.aten_elements));
    add_split(work.profiled,
              split_by_reference(counts_of(trace, "aten_compute_profiled"), allowed.profiled_ops));
    add_split(work.formatting, split_formatting(trace, allowed.formatted_tensors));
    add_split(work.kernels, split_by_reference(library_kernels(trace), allowed.gpu_kernels));
    add_split(work.host_reads,
              split_by_reference(counts_of(trace, "host_transfers"), allowed.host_transfers));
  }
  return work;
}

// What the reference's own PyTorch work covered: allowed, and said in the verdict.
void report_parity(const PyTorchWork& work, std::vector<Finding>& findings) {
  std::vector<std::string> parts;
  if (!work.aten.covered.empty()) {
    parts.push_back("ATen compute " + listed(work.aten.covered));
  }
  if (!work.kernels.covered.empty()) {
    parts.push_back("GPU kernels " + listed(work.kernels.covered, 4));
  }
  if (!work.host_reads.covered.empty()) {
    parts.push_back("host reads " + listed(work.host_reads.covered));
  }
  if (!work.formatting.covered.empty()) {
    parts.push_back("printing tensors " + listed(work.formatting.covered));
  }
  if (!parts.empty()) {
    findings.push_back(
        {"reference-parity", Severity::warn,
         fmt::format("forward ran PyTorch work that the reference, itself a Triton program, runs "
                     "in each call too ({}; totals over the traced calls): allowed up to the "
                     "reference's own count per call",
                     fmt::join(parts, "; ")),
         kNoLocation});
  }
}

void check_foreign_compute(const RuntimeEvidence& evidence, const PyTorchWork& work,
                           std::vector<Finding>& findings) {
  const auto foreign = summed_counts(evidence.traces, "foreign_launches");
  if (!foreign.empty()) {
    findings.push_back({"foreign-triton-kernel", Severity::reject,
                        "forward launched Triton kernels that the candidate does not define (" +
                            listed(foreign) + "): the speedup must come from the candidate's own kernels",
                        kNoLocation});
  }
  const std::string beyond_reference =
      evidence.reference ? " beyond what the reference (a Triton program) runs itself" : "";
  const auto& aten = work.aten.beyond;
  const auto& profiled = work.profiled.beyond;
  if (!aten.empty()) {
    findings.push_back({"torch-compute-at-runtime", Severity::reject,
                        "forward ran PyTorch (ATen) compute outside Triton kernels" + beyond_reference +
                            ": " + listed(aten) +
                            "; only allocation, views and copies may run around the launches",
                        kNoLocation});
  } else if (!profiled.empty()) {
    // The profiler hooks the dispatcher in C++: what it saw while the dispatch mode saw nothing was
    // hidden from the mode (popped, disabled, or run where the mode does not look).
    findings.push_back(
        {"torch-compute-at-runtime", Severity::reject,
         "forward ran PyTorch (ATen) compute outside Triton kernels that only the profiler saw (" +
             listed(profiled) +
             "): the candidate hid it from kforge's dispatch recorder; only allocation, views "
             "and copies may run around the launches",
         kNoLocation});
  }
  if (!work.formatting.beyond.empty()) {
    // torch formats tensors with the dispatch modes off: a print, not a candidate hiding its compute.
    findings.push_back(
        {"torch-compute-at-runtime", Severity::reject,
         fmt::format("forward turned {} tensor(s) into text (print, f-strings, str){}: formatting a tensor "
                     "runs PyTorch (ATen) compute ({}) and copies it to the host outside Triton kernels; "
                     "remove the prints from forward",
                     summed_number(evidence.traces, "formatted_tensors"),
                     evidence.reference ? fmt::format(" where the reference formats {} per call",
                                                      evidence.reference->formatted_tensors)
                                        : std::string(),
                     listed(work.formatting.beyond)),
         kNoLocation});
  }
  if (!work.kernels.beyond.empty()) {
    findings.push_back({"non-triton-gpu-kernel", Severity::reject,
                        "GPU kernels that are not the candidate's Triton kernels ran during forward" +
                            beyond_reference + " (" + listed(work.kernels.beyond, 4) +
                            "): cuBLAS, cuDNN and ATen compute do not count",
                        kNoLocation});
  }
}

void check_streams_and_leftovers(const RuntimeEvidence& evidence, std::vector<Finding>& findings) {
  const auto side = summed_counts(evidence.traces, "side_stream_launches");
  if (!side.empty()) {
    findings.push_back({"side-stream-launch", Severity::reject,
                        "Triton kernels were launched on a stream other than forward's (" + listed(side) +
                            "): work there escapes the timing events",
                        kNoLocation});
  }
  std::map<std::string, long> side_kernels;
  for (const auto& trace : evidence.traces) {
    for (const auto& kernel : trace.value("gpu_kernels", nlohmann::json::array())) {
      if (kernel.value("side_stream", false)) {
        side_kernels[kernel.value("name", "?").substr(0, 120)] += kernel.value("count", 1L);
      }
    }
  }
  if (!side_kernels.empty()) {
    findings.push_back({"side-stream-gpu-work", Severity::reject,
                        "GPU work ran on a stream other than forward's (" + listed(side_kernels, 4) +
                            "): the timing events do not cover it; run everything on the current stream",
                        kNoLocation});
  }
  std::set<std::string> threads;
  long children = 0;
  for (const auto& trace : evidence.traces) {
    for (const auto& name : trace.value("threads_left", nlohmann::json::array())) {
      threads.insert(name.is_string() ? name.get<std::string>() : "?");
    }
    children += trace.value("children_left", 0L);
  }
  if (!threads.empty() || children > 0) {
    findings.push_back(
        {"threads-left-alive", Severity::reject,
         fmt::format("forward returned with work still running: {} thread(s) [{}] and {} child "
                     "process(es); all work must finish inside forward",
                     threads.size(), fmt::join(threads, ", "), children),
         kNoLocation});
  }
}

void check_precision(const RuntimeEvidence& evidence, std::vector<Finding>& findings) {
  const auto& problem = evidence.problem_float_dtypes;
  const bool float32_problem =
      !problem.empty() && std::all_of(problem.begin(), problem.end(),
                                      [](const auto& d) { return d == "float32" || d == "float64"; });
  if (!float32_problem) {
    return;
  }
  std::set<std::string> lower;
  for (const auto& trace : evidence.traces) {
    for (const auto& dtype : trace.value("kernel_arg_dtypes", nlohmann::json::array())) {
      const std::string name = dtype.is_string() ? dtype.get<std::string>() : "";
      if (name == "float16" || name == "bfloat16" || name.rfind("float8", 0) == 0) {
        lower.insert(name);
      }
    }
  }
  if (!lower.empty()) {
    findings.push_back(
        {"precision-downgrade-runtime", Severity::reject,
         fmt::format("the problem's inputs are {} but the candidate's kernels received {} tensors: "
                     "computing in lower precision is a different problem",
                     fmt::join(problem, "/"), fmt::join(lower, "/")),
         kNoLocation});
  }
}

void check_host_transfers(const RuntimeEvidence& evidence, const PyTorchWork& work,
                          std::vector<Finding>& findings) {
  const auto& derived = work.host_reads.beyond;
  if (!derived.empty()) {
    findings.push_back({"host-transfer", Severity::reject,
                        "forward read input-derived tensor data on the host (" + listed(derived) +
                            "): computing in Python or numpy and copying the answer with a kernel is not "
                            "Triton computing the op; keep the data on the device and compute in the kernels",
                        kNoLocation});
    return;
  }
  if (!evidence.on_gpu) {
    return;
  }
  for (std::size_t i = 0; i < evidence.traces.size(); ++i) {
    const auto& trace = evidence.traces[i];
    const long copies = device_to_host_copies(trace);
    const long seen = trace.value("device_to_host_conversions", 0L);
    const long reference_unseen = evidence.reference ? evidence.reference->unseen_copies_to_host : 0;
    if (copies > seen + reference_unseen) {
      findings.push_back(
          {"host-transfer", Severity::reject,
           fmt::format(
               "call {} of forward copied data from the GPU to the host {} time(s) (CUPTI) but made "
               "{} tensor conversion(s) kforge could see{}: device-to-host transfers during forward "
               "move the work off the GPU",
               i + 1, copies, seen,
               reference_unseen > 0
                   ? fmt::format(" (the reference's own call copies {} time(s) more than it converts)",
                                 reference_unseen)
                   : std::string()),
           kNoLocation});
      return;
    }
  }
}

void check_kernel_arguments(const RuntimeEvidence& evidence, std::vector<Finding>& findings) {
  const auto bad = summed_counts(evidence.traces, "bad_kernel_arguments");
  if (!bad.empty()) {
    findings.push_back({"kernel-constexpr-argument", Severity::reject,
                        "the candidate's kernels received arguments that are not plain values (" +
                            listed(bad, 4) +
                            "): tl.constexpr arguments must be ints, floats, bools, strings, dtypes or None, "
                            "and kernels take tensors and scalars, not Python objects that compute",
                        kNoLocation});
  }
}

}  // namespace

bool RuntimeEvidence::ran_pytorch_work() const {
  const PyTorchWork work = pytorch_work(traces, nullptr);
  return !work.aten.beyond.empty() || !work.profiled.beyond.empty() || !work.formatting.beyond.empty() ||
         !work.kernels.beyond.empty() || !work.host_reads.beyond.empty();
}

long RuntimeEvidence::own_launches_per_call() const {
  long fewest = std::numeric_limits<long>::max();
  for (const auto* trace : steady_traces(traces)) {
    fewest = std::min(fewest, own_total(*trace));
  }
  return traces.empty() ? 0 : fewest;
}

double RuntimeEvidence::gpu_kernel_time_us() const {
  double fewest = std::numeric_limits<double>::infinity();
  for (const auto* trace : steady_traces(traces)) {
    fewest = std::min(fewest, trace->value("gpu_kernel_time_us", 0.0));
  }
  return traces.empty() ? 0.0 : fewest;
}

nlohmann::json RuntimeEvidence::time_coverage() const {
  const auto steady = steady_traces(traces);
  if (!on_gpu || steady.empty()) {
    return nullptr;
  }
  const auto& last = *steady.back();
  const double total = last.value("gpu_kernel_time_us", 0.0);
  return total > 0.0 ? nlohmann::json(last.value("own_kernel_time_us", 0.0) / total)
                     : nlohmann::json(nullptr);
}

std::vector<rules::Finding> runtime_findings(const RuntimeEvidence& evidence) {
  std::vector<Finding> findings;
  check_own_kernels_ran(evidence, findings);
  check_swallowed_failures(evidence, findings);
  const PyTorchWork work = pytorch_work(evidence.traces, evidence.reference ? &*evidence.reference : nullptr);
  check_foreign_compute(evidence, work, findings);
  check_streams_and_leftovers(evidence, findings);
  check_precision(evidence, findings);
  check_host_transfers(evidence, work, findings);
  report_parity(work, findings);
  check_kernel_arguments(evidence, findings);
  return findings;
}

}  // namespace kforge::verify
