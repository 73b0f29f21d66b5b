#include "rules/rule_side_stream.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Stream and graph APIs, reported at each use (calls and references).
constexpr auto kMembers = std::to_array<std::string_view>(
    {"torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.stream", "torch.cuda.set_stream",
     "torch.cuda.StreamContext", "torch.cuda.streams", "torch.cuda.graph", "torch.cuda.graphs",
     "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables", "torch.cuda.graph_pool_handle",
     "torch.Stream", "torch.StreamContext", "torch.accelerator.set_stream", "torch.cuda.Event().wait",
     "torch.Event().wait", "torch.cuda.streams.Event().wait"});

// The tables hashed once, on first use.
const ForbiddenApi& forbidden_api() {
  static const ForbiddenApi api(std::span<const std::string_view>{}, kMembers);
  return api;
}

// Methods that make one stream wait for another: reported whatever the receiver.
constexpr auto kWaitMethods = std::to_array<std::string_view>({"wait_stream", "wait_event", "record_stream"});

constexpr std::string_view kWhy =
    ": kforge times forward with events on the current stream, so work on another stream or replayed "
    "from a CUDA graph escapes the measurement (and the output may be read before it is written); launch "
    "every kernel on the current stream (synchronize() is fine)";

// Whether `call` is a kernel launch (`kernel[grid](...)`, `kernel.run(...)`) or a torch/triton call.
bool takes_stream_argument(const source::Call& call, const NameResolver& names) {
  if (call.func->kind() == source::NodeKind::subscript) {
    return true;
  }
  const std::string origin = names.resolve(*call.func);
  return in_module(origin, "torch") || in_module(origin, "triton");
}

}  // namespace

std::string_view SideStreamRule::summary() const {
  return "no side streams or CUDA graphs: all work on the current stream, where timing sees it";
}

void SideStreamRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const ResolverHandle resolver(context);
  const NameResolver& names = resolver.get();
  const Severity severity = severity_for(context.profile);
  FindingSink sink(kId, findings);
  source::walk(context.module, [&](const source::Node& node) {
    if (const auto* attribute = source::node_cast<source::Attribute>(node);
        attribute != nullptr && in_table(kWaitMethods, attribute->attr)) {
      sink.add(severity,
               "`" + spelling(*attribute) + "` synchronises streams with each other" + std::string(kWhy),
               attribute->location);
    } else if (const auto* call = source::node_cast<source::Call>(node)) {
      for (const auto& keyword : call->keywords) {
        if (keyword->name == "stream" && takes_stream_argument(*call, names)) {
          sink.add(severity,
                   "`stream=` passed to `" + spelling(*call->func) + "` runs it on a chosen stream" +
                       std::string(kWhy),
                   keyword->location);
        }
      }
    }
    return source::WalkAction::visit_children;
  });
  scan_forbidden_api(
      context, names, forbidden_api(), [](const ForbiddenImport& /*import*/) {},
      [&](const source::Expr& use, const Resolved& resolved) {
        sink.add(severity,
                 describe(use, resolved.origin) + " uses a side stream or a CUDA graph" + std::string(kWhy),
                 use.location);
      });
}

}  // namespace kforge::rules
