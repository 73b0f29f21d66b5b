#include "rules/rule_host_round_trip.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Tensor methods that hand the values to the host.
constexpr auto kHostMethods = std::to_array<std::string_view>(
    {"tolist", "numpy", "cpu", "__array__", "__dlpack__", "untyped_storage", "storage"});

// What a storage object tells without its bytes: `x.untyped_storage().size()` sizes a buffer, it moves
// nothing (real kernels use it to count the elements a view spans).
constexpr auto kStorageMetadata = std::to_array<std::string_view>(
    {"size", "nbytes", "data_ptr", "element_size", "device", "is_shared", "is_pinned"});

// numpy functions that build a host array from their argument (a tensor, in a round trip).
constexpr auto kNumpyConstructors = std::to_array<std::string_view>(
    {"numpy.asarray", "numpy.array", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.frombuffer",
     "numpy.copy", "numpy.fromiter", "numpy.from_dlpack"});

constexpr std::string_view kHostRoundTripWhy =
    ": moving the data to the host lets Python or numpy compute the answer while a Triton kernel only "
    "copies it; keep the data on the device and compute in the kernels";

bool is_cpu_literal(const source::Expr* expr, const NameResolver& names) {
  if (const auto literal = string_literal(expr)) {
    return *literal == "cpu" || literal->starts_with("cpu:");
  }
  if (const auto* call = source::node_cast<source::Call>(expr)) {
    return names.resolve(*call->func) == "torch.device" && !call->args.empty() &&
           is_cpu_literal(call->args[0].get(), names);
  }
  return false;
}

class RoundTripChecker {
 public:
  RoundTripChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(HostRoundTripRule::kId, findings),
        severity_(severity) {}

  void run() {
    walk_reachable(context_, names_, [this](const source::Node& node, const FunctionBody& /*body*/) {
      if (const auto* call = source::node_cast<source::Call>(node)) {
        check_call(*call);
      }
    });
  }

 private:
  void check_call(const source::Call& call) {
    const std::string origin = names_.resolve(*call.func);
    if (in_table(kNumpyConstructors, origin) && !call.args.empty()) {
      sink_.add(severity_,
                describe(*call.func, origin) + " builds a host array" + std::string(kHostRoundTripWhy),
                call.location);
      return;
    }
    const auto* method = source::node_cast<source::Attribute>(call.func.get());
    if (method == nullptr || !tensor_like(*method->value)) {
      return;
    }
    if (in_table(kHostMethods, method->attr) && !metadata_only(call, method->attr)) {
      sink_.add(severity_,
                "`" + spelling(call) + "` moves tensor data to the host" + std::string(kHostRoundTripWhy),
                call.location);
    } else if (method->attr == "to" && moves_to_cpu(call)) {
      sink_.add(severity_,
                "`" + spelling(call) + "` copies the tensor to the host" + std::string(kHostRoundTripWhy),
                call.location);
    } else if (method->attr == "item") {
      sink_.add(
          Severity::warn,
          "`" + spelling(call) +
              "` reads a tensor value on the host: fine for a scalar parameter, but kforge rejects it at "
              "run time when the value comes from the inputs (host-transfer)",
          call.location);
    }
  }

  // `x.untyped_storage()` (or `.storage()`) whose only use is a metadata read such as `.size()`.
  bool metadata_only(const source::Call& call, std::string_view method) const {
    if (method != "untyped_storage" && method != "storage") {
      return false;
    }
    const auto* use = source::node_cast<source::Attribute>(names_.parent(call));
    return use != nullptr && use->value.get() == &call && in_table(kStorageMetadata, use->attr);
  }

  bool moves_to_cpu(const source::Call& call) const {
    for (const auto& argument : call.args) {
      if (is_cpu_literal(argument.get(), names_)) {
        return true;
      }
    }
    for (const auto& keyword : call.keywords) {
      if (keyword->name == "device" && is_cpu_literal(keyword->value.get(), names_)) {
        return true;
      }
    }
    return false;
  }

  // A receiver that may be a tensor: not `self`, not a module or an object of another library.
  bool tensor_like(const source::Expr& receiver) const {
    if (const auto* name = source::node_cast<source::Name>(&receiver);
        name != nullptr && name->id == "self") {
      return false;
    }
    const std::string origin = names_.resolve(receiver);
    return origin.empty() || in_module(origin, "torch");
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
};

}  // namespace

std::string_view HostRoundTripRule::summary() const {
  return "no tensor data moved to the host on forward's path (.tolist(), .numpy(), .cpu(), .to(\"cpu\"), "
         "numpy arrays from tensors)";
}

void HostRoundTripRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  RoundTripChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
