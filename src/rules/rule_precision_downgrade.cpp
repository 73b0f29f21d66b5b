#include "rules/rule_precision_downgrade.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

// Low-precision dtypes by origin; every torch.float8_* and triton.language.float8* also counts.
constexpr auto kLowPrecisionDtypes = std::to_array<std::string_view>(
    {"torch.float16", "torch.half", "torch.bfloat16", "torch.HalfTensor", "torch.BFloat16Tensor",
     "torch.cuda.HalfTensor", "torch.cuda.BFloat16Tensor", "triton.language.float16",
     "triton.language.bfloat16", "triton.language.core.float16", "triton.language.core.bfloat16",
     "numpy.float16", "numpy.half"});
constexpr auto kFloat8Prefixes = std::to_array<std::string_view>(
    {"torch.float8", "triton.language.float8", "triton.language.core.float8"});

// Methods whose first positional argument may be a dtype (x.to(dt), x.type(dt), x.view(dt)).
constexpr auto kDtypeTakingMethods = std::to_array<std::string_view>({"to", "type", "view"});

// Tensor methods that cast to a low-precision dtype.
constexpr auto kCastMethods = std::to_array<std::string_view>({"half", "bfloat16"});

// Spellings of a tensor type given to Tensor.type() as a string.
constexpr auto kLowPrecisionTypeNames = std::to_array<std::string_view>(
    {"torch.HalfTensor", "torch.BFloat16Tensor", "torch.cuda.HalfTensor", "torch.cuda.BFloat16Tensor"});

// Names whose presence in the problem's code makes it a half-precision problem.
constexpr auto kHalfMarkers = std::to_array<std::string_view>(
    {"float16", "half", "bfloat16", "HalfTensor", "BFloat16Tensor", "fp16", "bf16"});

// numpy spellings of float16 given as a dtype string.
constexpr auto kNumpyHalfCodes =
    std::to_array<std::string_view>({"e", "f2", "<f2", ">f2", "=f2", "float16", "half"});

constexpr auto kAutocasts = std::to_array<std::string_view>(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"});

constexpr auto kTf32Precisions = std::to_array<std::string_view>({"tf32", "tf32x3"});

enum class ProblemPrecision : std::uint8_t { unknown, float32, half };

bool is_half_marker(std::string_view word) {
  return in_table(kHalfMarkers, word) || word.starts_with("float8");
}

// float32 unless the problem's code (docstrings and comments aside) names a half-precision dtype.
ProblemPrecision problem_precision(std::string_view problem_source) {
  if (problem_source.empty()) {
    return ProblemPrecision::unknown;
  }
  // Every half-precision name or string the walk below can find is spelled in the source unless an
  // escape hides it: without a marker and a backslash the answer is float32, with no parse (it is
  // redone for every candidate, and costs more than the rest of this rule).
  const auto spelled = [problem_source](std::string_view marker) {
    return problem_source.find(marker) != std::string_view::npos;
  };
  if (std::none_of(kHalfMarkers.begin(), kHalfMarkers.end(), spelled) && !spelled("float8") &&
      !spelled("\\")) {
    return ProblemPrecision::float32;
  }
  const source::ParseResult parsed = source::parse_module(problem_source);
  if (!parsed.ok()) {
    for (const std::string_view marker : {"float16", "bfloat16", "half", "float8"}) {
      if (problem_source.find(marker) != std::string_view::npos) {
        return ProblemPrecision::half;
      }
    }
    return ProblemPrecision::float32;
  }
  bool half = false;
  source::walk(*parsed.module, [&half](const source::Node& node) {
    if (const auto* name = source::node_cast<source::Name>(node)) {
      half = half || is_half_marker(name->id);
    } else if (const auto* attribute = source::node_cast<source::Attribute>(node)) {
      half = half || is_half_marker(attribute->attr);
    } else if (const auto* keyword = source::node_cast<source::Keyword>(node)) {
      const auto value = string_literal(keyword->value.get());
      half = half || (value && is_half_marker(last_component(*value)));
    } else if (const auto* call = source::node_cast<source::Call>(node)) {
      for (const auto& argument : call->args) {
        const auto value = string_literal(argument.get());
        half = half || (value && is_half_marker(last_component(*value)));
      }
    }
    return half ? source::WalkAction::skip_children : source::WalkAction::visit_children;
  });
  return half ? ProblemPrecision::half : ProblemPrecision::float32;
}

class PrecisionChecker {
 public:
  PrecisionChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity,
                   bool problem_known)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(PrecisionDowngradeRule::kId, findings),
        severity_(severity),
        problem_known_(problem_known) {}

  void run() {
    walk_reachable(context_, names_, [this](const source::Node& node, const FunctionBody& body) {
      if (const auto* call = source::node_cast<source::Call>(node)) {
        check_call(*call, body, false);
      }
    });
    for (const FunctionBody& kernel : kernel_bodies(context_, names_)) {
      walk_body(*kernel.node, [&](const source::Node& node) {
        if (const auto* call = source::node_cast<source::Call>(node)) {
          check_call(*call, kernel, true);
        }
      });
    }
  }

 private:
  std::optional<std::string> low_precision_origin(const source::Expr& expr) const {
    const std::string origin = names_.resolve(expr);
    if (!is_static_origin(origin)) {
      return std::nullopt;
    }
    if (in_table(kLowPrecisionDtypes, origin) ||
        std::any_of(kFloat8Prefixes.begin(), kFloat8Prefixes.end(),
                    [&origin](std::string_view prefix) { return origin.starts_with(prefix); })) {
      return origin;
    }
    return std::nullopt;
  }

  // Which branch of `a if <test> else b` runs only when an input already has a low-precision
  // dtype: the body for `x.dtype == torch.float16` (or `in (torch.float16, ...)`), the orelse for
  // `!=` / `not in`. That branch follows the input's dtype, which is float32 in a float32 problem.
  enum class Exempt : std::uint8_t { none, body, orelse };
  Exempt dtype_dispatch(const source::IfExp& conditional) const {
    const auto* compare = source::node_cast<source::Compare>(conditional.test.get());
    if (compare == nullptr || compare->ops.size() != 1) {
      return Exempt::none;
    }
    const auto* subject = source::node_cast<source::Attribute>(compare->left.get());
    if (subject == nullptr || subject->attr != "dtype") {
      return Exempt::none;
    }
    const source::Expr& against = *compare->comparators.front();
    bool low = low_precision_origin(against).has_value();
    if (against.kind() == source::NodeKind::tuple || against.kind() == source::NodeKind::list ||
        against.kind() == source::NodeKind::set) {
      const std::vector<const source::Node*> options = source::children_of(against);
      low =
          !options.empty() && std::all_of(options.begin(), options.end(), [this](const source::Node* option) {
            return low_precision_origin(source::as_expr(*option)).has_value();
          });
    }
    if (!low) {
      return Exempt::none;
    }
    switch (compare->ops.front()) {
      case source::CompareOperator::eq:
      case source::CompareOperator::is:
      case source::CompareOperator::in:
        return Exempt::body;
      case source::CompareOperator::not_eq_:
      case source::CompareOperator::is_not:
      case source::CompareOperator::not_in:
        return Exempt::orelse;
      default:
        return Exempt::none;
    }
  }

  std::optional<std::string> low_precision_conditional(const source::IfExp& conditional) const {
    const Exempt exempt = dtype_dispatch(conditional);
    if (exempt != Exempt::body) {
      if (auto found = low_precision_origin(*conditional.body)) {
        return found;
      }
    }
    return exempt != Exempt::orelse ? low_precision_origin(*conditional.orelse) : std::nullopt;
  }

  // What a name holds (values_of), without the exempt branch of a dtype dispatch, which
  // values_of() lists as a value of its own.
  std::vector<const source::Expr*> dtype_values(const source::Expr& expr) const {
    std::vector<const source::Expr*> values = names_.values_of(expr);
    std::set<const source::Expr*> exempt;
    for (const source::Expr* value : values) {
      if (const auto* conditional = source::node_cast<source::IfExp>(value)) {
        const Exempt branch = dtype_dispatch(*conditional);
        if (branch != Exempt::none) {
          exempt.insert(branch == Exempt::body ? conditional->body.get() : conditional->orelse.get());
        }
      }
    }
    std::erase_if(values, [&exempt](const source::Expr* value) { return exempt.contains(value); });
    return values;
  }

  // The low-precision dtype `expr` denotes: directly, through a name bound to it, or through a
  // conditional that is not a dtype dispatch (see dtype_dispatch).
  std::optional<std::string> low_precision_dtype(const source::Expr& expr) const {
    if (const auto* conditional = source::node_cast<source::IfExp>(expr)) {
      return low_precision_conditional(*conditional);
    }
    const std::vector<const source::Expr*> values =
        expr.kind() == source::NodeKind::name ? dtype_values(expr) : std::vector<const source::Expr*>{};
    if (values.empty()) {
      return low_precision_origin(expr);
    }
    for (const source::Expr* value : values) {
      const auto* conditional = source::node_cast<source::IfExp>(value);
      if (auto found = conditional != nullptr ? low_precision_conditional(*conditional)
                                              : low_precision_origin(*value)) {
        return found;
      }
    }
    return std::nullopt;
  }

  // A low-precision dtype inside the values a name holds, e.g. a module-level
  // `DT = torch.zeros(1, dtype=torch.half).dtype` or a numpy dtype code (`dtype="e"`).
  std::optional<std::string> low_precision_value(const source::Expr& expr) const {
    std::optional<std::string> found;
    for (const source::Expr* value : dtype_values(expr)) {
      source::walk(*value, [&](const source::Node& node) {
        if (found) {
          return source::WalkAction::skip_children;
        }
        if (const auto* conditional = source::node_cast<source::IfExp>(node);
            conditional != nullptr && dtype_dispatch(*conditional) != Exempt::none) {
          found = low_precision_conditional(*conditional);
          return source::WalkAction::skip_children;
        }
        if (const auto* keyword = source::node_cast<source::Keyword>(node);
            keyword != nullptr && keyword->name == "dtype") {
          const auto code = string_literal(keyword->value.get());
          if (code && in_table(kNumpyHalfCodes, *code)) {
            found = "numpy dtype \"" + *code + "\"";
          }
        }
        if (const auto* reference = source::expr_cast(&node);
            reference != nullptr && is_reference_root(node, names_)) {
          found = low_precision_origin(*reference);
        }
        return source::WalkAction::visit_children;
      });
      if (found) {
        return found;
      }
    }
    return std::nullopt;
  }

  // The position of the dtype among the positional arguments: x.to(dt), x.type(dt), x.view(dt),
  // tl.cast(x, dt).
  std::optional<std::size_t> dtype_argument_index(const source::Call& call) const {
    const auto* method = source::node_cast<source::Attribute>(call.func.get());
    if (method == nullptr) {
      return std::nullopt;
    }
    if (method->attr == "cast" && in_module(names_.resolve(*call.func), "triton.language")) {
      return 1;
    }
    return in_table(kDtypeTakingMethods, method->attr) ? std::optional<std::size_t>(0) : std::nullopt;
  }

  void check_call(const source::Call& call, const FunctionBody& body, bool in_kernel) {
    const std::string callee = names_.resolve(*call.func);
    const auto* method = source::node_cast<source::Attribute>(call.func.get());
    if (const auto dtype = low_precision_dtype(*call.func)) {
      report(call, "`" + spelling(*call.func) + "(...)` converts to " + *dtype, body);
    } else if (method != nullptr && in_table(kCastMethods, method->attr) &&
               (!is_static_origin(callee) || in_module(callee, "torch.Tensor"))) {
      report(call, "`" + spelling(*call.func) + "()` casts to " + method->attr, body);
    }
    const std::optional<std::size_t> dtype_index = dtype_argument_index(call);
    for (std::size_t i = 0; i < call.args.size(); ++i) {
      check_argument(*call.args[i], call, body, dtype_index == i);
    }
    for (const auto& keyword : call.keywords) {
      check_argument(*keyword->value, call, body, keyword->name.ends_with("dtype"));
    }
    if (method != nullptr && method->attr == "type" && !call.args.empty()) {
      const auto type_name = string_literal(call.args.front().get());
      if (type_name && in_table(kLowPrecisionTypeNames, *type_name)) {
        report(*call.args.front(),
               "`" + spelling(*call.func) + "(\"" + *type_name + "\")` casts to half precision", body);
      }
    }
    if (in_table(kAutocasts, callee)) {
      check_autocast(call, body);
    }
    if (in_kernel && in_module(callee, "triton.language") && last_component(callee) == "dot") {
      check_dot(call, body);
    }
  }

  // `dtype_position`: the argument is a dtype (a `dtype=` keyword, the argument of .to/.type...),
  // so what a name holds is followed too; elsewhere only direct dtype references count.
  void check_argument(const source::Expr& argument, const source::Call& call, const FunctionBody& body,
                      bool dtype_position) {
    if (const auto dtype = low_precision_dtype(argument)) {
      report(argument, describe(argument, *dtype) + " is passed to `" + spelling(*call.func) + "`", body);
    } else if (const auto held = dtype_position ? low_precision_value(argument) : std::nullopt) {
      report(argument,
             "`" + spelling(argument) + "`, which holds " + *held + ", is passed to `" +
                 spelling(*call.func) + "`",
             body);
    }
  }

  // torch.autocast on CUDA defaults to float16.
  void check_autocast(const source::Call& call, const FunctionBody& body) {
    bool has_dtype = false;
    bool disabled = false;
    for (const auto& keyword : call.keywords) {
      has_dtype = has_dtype || keyword->name == "dtype";
      const auto* value = source::node_cast<source::Constant>(keyword->value.get());
      disabled = disabled || (keyword->name == "enabled" && value != nullptr &&
                              value->constant_kind == source::ConstantKind::false_);
    }
    if (!has_dtype && !disabled) {
      report(call, "`" + spelling(*call.func) + "(...)` without dtype autocasts to float16", body);
    }
  }

  void check_dot(const source::Call& call, const FunctionBody& body) {
    for (const auto& keyword : call.keywords) {
      const auto* flag = source::node_cast<source::Constant>(keyword->value.get());
      const auto precision = string_literal(keyword->value.get());
      if ((keyword->name == "allow_tf32" && flag != nullptr &&
           flag->constant_kind == source::ConstantKind::true_) ||
          (keyword->name == "input_precision" && precision && in_table(kTf32Precisions, *precision))) {
        report(*keyword, "`" + spelling(*call.func) + "` asks for TF32 inputs (10-bit mantissa)", body);
      }
    }
    for (const auto& argument : call.args) {
      const auto precision = string_literal(argument.get());
      if (precision && in_table(kTf32Precisions, *precision)) {
        report(*argument, "`" + spelling(*call.func) + "` asks for TF32 inputs (10-bit mantissa)", body);
      }
    }
  }

  void report(const source::Node& node, const std::string& what, const FunctionBody& body) {
    const std::string why =
        problem_known_
            ? ": the problem computes in float32, and lower precision buys speed by changing the numerics "
              "the "
              "verdict compares; keep loads, math and stores in float32 (tl.dot accumulates in float32)"
            : ": the problem's precision is unknown (no problem source was given), so this is only a "
              "warning; "
              "for a float32 problem keep loads, math and stores in float32";
    sink_.add(severity_, what + " in `" + body.qualified_name + "`" + why, node.location);
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
  bool problem_known_;
};

}  // namespace

std::string_view PrecisionDowngradeRule::summary() const {
  return "no casts to float16/bfloat16/float8 or explicit TF32 when the problem computes in float32";
}

void PrecisionDowngradeRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const ProblemPrecision precision = problem_precision(context.problem_source);
  if (precision == ProblemPrecision::half) {
    return;
  }
  const bool known = precision == ProblemPrecision::float32;
  PrecisionChecker(context, findings, known ? severity_for(context.profile) : Severity::warn, known).run();
}

}  // namespace kforge::rules
