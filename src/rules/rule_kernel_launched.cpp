#include "rules/rule_kernel_launched.hpp"

#include <set>
#include <string>
#include <string_view>

namespace kforge::rules {
namespace {

constexpr source::SourceLocation kModuleStart{1, 1};

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "`" : (i + 1 == names.size() ? " and `" : ", `")) + names[i] + "`";
  }
  return text;
}

// "; `k` is launched only from `helper`, which ModelNew.forward never calls" for each kernel
// launched somewhere unreachable, so the fix is obvious.
std::string unreachable_launch_hints(const source::ModuleIndex& index) {
  std::string hints;
  std::set<std::string_view> mentioned;  // a set: a module may hold thousands of launches
  for (const source::KernelLaunch& launch : index.launches) {
    if (launch.reachable_from_forward || !mentioned.insert(launch.kernel).second) {
      continue;
    }
    hints += "; `" + launch.kernel + "` is launched only from `" + launch.function + "` (line " +
             std::to_string(launch.location.line) + "), which ModelNew.forward never calls";
  }
  return hints;
}

std::string not_launched_message(const source::ModuleIndex& index) {
  const std::vector<std::string> kernels = index.unlaunched_kernels();
  const std::string subject = kernels.size() == 1
                                  ? "Triton kernel " + quoted_list(kernels) + " is defined but not"
                                  : "Triton kernels " + quoted_list(kernels) + " are defined but none is";
  return subject +
         " launched from ModelNew.forward: expected a launch such as `kernel[grid](...)` in forward or in a "
         "function it calls" +
         unreachable_launch_hints(index);
}

}  // namespace

std::string_view KernelLaunchedRule::summary() const {
  return "a @triton.jit kernel must be defined and launched from ModelNew.forward or a function it calls";
}

void KernelLaunchedRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const source::ModuleIndex& index = context.index;
  const auto report = [&](std::string message, source::SourceLocation location) {
    findings.push_back({std::string(kId), severity(), std::move(message), location});
  };
  if (index.kernels.empty()) {
    report("no Triton kernel is defined: expected a function decorated with @triton.jit", kModuleStart);
  }
  if (!index.model) {
    report("no class named ModelNew is defined", kModuleStart);
    return;
  }
  if (!index.model->has_forward) {
    const std::string& name = index.model->class_name;
    report("class " + name + (name == "ModelNew" ? "" : " (bound to ModelNew)") +
               " does not define a forward() method",
           index.model->location);
    return;
  }
  if (!index.kernels.empty() && index.launched_kernels().empty()) {
    report(not_launched_message(index), index.kernels.front().location);
  }
}

}  // namespace kforge::rules
