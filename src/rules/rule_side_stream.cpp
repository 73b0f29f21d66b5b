#include "rules/rule_side_stream.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Stream and graph APIs, reported at each use (calls and references).
constexpr auto kSideStreamMembers = std::to_array<std::string_view>(
    {"torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.stream", "torch.cuda.set_stream",
     "torch.cuda.StreamContext", "torch.cuda.streams", "torch.cuda.graph", "torch.cuda.graphs",
     "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables", "torch.cuda.graph_pool_handle",
     "torch.Stream", "torch.StreamContext", "torch.accelerator.set_stream", "torch.cuda.Event().wait",
     "torch.Event().wait", "torch.cuda.streams.Event().wait"});

// The tables hashed once, on first use.
const ForbiddenApi& side_stream_api() {
  static const ForbiddenApi api(std::span<const std::string_view>{}, kSideStreamMembers);
  return api;
}

// Methods that make one stream wait for another: reported whatever the receiver.
constexpr auto kWaitMethods = std::to_array<std::string_view>({"wait_stream", "wait_event", "record_stream"});

constexpr std::string_view kSideStreamWhy =
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

// Stream switches that take the stream to switch to as their first argument (or `stream=`).
constexpr auto kStreamSwitches =
    std::to_array<std::string_view>({"torch.cuda.stream", "torch.cuda.StreamContext", "torch.cuda.set_stream",
                                     "torch.cuda.streams.StreamContext"});

// Whether `expr` can only be the current stream: `torch.cuda.current_stream(...)`, None
// (torch.cuda.stream(None) does nothing), a choice between those, or a name or attribute every
// assignment of which is one.
bool is_current_stream(const source::Expr& expr, const NameResolver& names, int depth = 0) {
  if (depth > 8) {
    return false;
  }
  if (const auto* constant = source::node_cast<source::Constant>(expr)) {
    return constant->constant_kind == source::ConstantKind::none;
  }
  if (const auto* call = source::node_cast<source::Call>(expr)) {
    return names.resolve(*call->func) == "torch.cuda.current_stream";
  }
  if (const auto* choice = source::node_cast<source::IfExp>(expr)) {
    return is_current_stream(*choice->body, names, depth + 1) &&
           is_current_stream(*choice->orelse, names, depth + 1);
  }
  if (expr.kind() != source::NodeKind::name && expr.kind() != source::NodeKind::attribute) {
    return false;
  }
  const auto values = names.values_of(expr);
  return !values.empty() && std::all_of(values.begin(), values.end(), [&](const source::Expr* value) {
    return is_current_stream(*value, names, depth + 1);
  });
}

// `with torch.cuda.stream(torch.cuda.current_stream(dev)):` changes nothing: the use is the callee of a
// stream switch whose stream is the current one.
bool switches_to_current_stream(const source::Expr& use, const std::string& origin,
                                const NameResolver& names) {
  if (!in_table(kStreamSwitches, origin)) {
    return false;
  }
  const auto* call = source::node_cast<source::Call>(names.parent(use));
  if (call == nullptr || call->func.get() != &use) {
    return false;
  }
  const source::Expr* stream =
      call->args.size() == 1 && call->keywords.empty() ? call->args[0].get() : nullptr;
  if (call->args.empty() && call->keywords.size() == 1 && call->keywords[0]->name == "stream") {
    stream = call->keywords[0]->value.get();
  }
  return stream != nullptr && is_current_stream(*stream, names);
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
      sink.add(
          severity,
          "`" + spelling(*attribute) + "` synchronises streams with each other" + std::string(kSideStreamWhy),
          attribute->location);
    } else if (const auto* call = source::node_cast<source::Call>(node)) {
      for (const auto& keyword : call->keywords) {
        if (keyword->name == "stream" && takes_stream_argument(*call, names)) {
          sink.add(severity,
                   "`stream=` passed to `" + spelling(*call->func) + "` runs it on a chosen stream" +
                       std::string(kSideStreamWhy),
                   keyword->location);
        }
      }
    }
    return source::WalkAction::visit_children;
  });
  scan_forbidden_api(
      context, names, side_stream_api(), [](const ForbiddenImport& /*import*/) {},
      [&](const source::Expr& use, const Resolved& resolved) {
        if (switches_to_current_stream(use, resolved.origin, names)) {
          return;
        }
        sink.add(severity,
                 describe(use, resolved.origin) + " uses a side stream or a CUDA graph" +
                     std::string(kSideStreamWhy),
                 use.location);
      });
}

}  // namespace kforge::rules
