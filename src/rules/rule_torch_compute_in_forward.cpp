#include "rules/rule_torch_compute_in_forward.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

// ---------------------------------------------------------------------------------------------
// Tables (docs/rules.md lists them too). A call to `torch.<name>` is compute unless <name> is in
// kNeutralTorchFunctions, kDataMovementTorchFunctions or kTorchOwnedElsewhere, or starts with an
// upper-case letter (types and constructors such as torch.Tensor, torch.Size, torch.Generator).
// A reference that is not called (e.g. `map(torch.exp, xs)`) is reported only for the explicit
// compute functions of kComputeTorchFunctions and the compute submodules.

// torch.<name> functions that allocate, view, reshape, describe or configure: no compute.
constexpr auto kNeutralTorchFunctions = std::to_array<std::string_view>(
    {// allocation and random fills
     "empty", "empty_like", "empty_strided", "empty_permuted", "zeros", "zeros_like", "ones", "ones_like",
     "full", "full_like", "arange", "range", "linspace", "logspace", "eye", "tensor", "as_tensor", "asarray",
     "scalar_tensor", "from_numpy", "frombuffer", "rand", "rand_like", "randn", "randn_like", "randint",
     "randint_like", "randperm", "tril_indices", "triu_indices", "manual_seed", "seed", "initial_seed",
     "get_rng_state", "set_rng_state",
     // views, layout and copies
     "as_strided", "view_as_real", "view_as_complex", "reshape", "permute", "transpose", "swapaxes",
     "swapdims", "movedim", "moveaxis", "t", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow",
     "select", "split", "tensor_split", "hsplit", "vsplit", "dsplit", "chunk", "unbind", "broadcast_to",
     "broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d", "clone", "detach",
     "real", "imag", "conj",
     // queries and settings
     "numel", "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "is_same_size",
     "result_type", "promote_types", "can_cast", "get_default_dtype", "set_default_dtype",
     "set_default_tensor_type", "get_default_device", "set_default_device", "finfo", "iinfo", "typename",
     "device", "dtype", "get_device", "is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled",
     "get_autocast_dtype", "are_deterministic_algorithms_enabled", "use_deterministic_algorithms",
     "get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
     "set_printoptions", "get_float32_matmul_precision", "set_float32_matmul_precision", "no_grad",
     "enable_grad", "inference_mode", "set_grad_enabled", "autocast", "_assert", "sym_int", "sym_float"});

// torch.<name> functions that move data without arithmetic: reported as warn only.
constexpr auto kDataMovementTorchFunctions = std::to_array<std::string_view>(
    {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"});

// torch.<name> that other rules report (file-and-network-io, native-code).
constexpr auto kTorchOwnedElsewhere =
    std::to_array<std::string_view>({"load", "save", "from_file", "compile"});

// Compute functions named explicitly (also reported when referenced without a call). The call
// rule covers every other lower-case torch.<name> as well.
constexpr auto kComputeTorchFunctions = std::to_array<std::string_view>({"matmul",
                                                                         "mm",
                                                                         "bmm",
                                                                         "addmm",
                                                                         "addbmm",
                                                                         "baddbmm",
                                                                         "addmv",
                                                                         "mv",
                                                                         "addr",
                                                                         "einsum",
                                                                         "tensordot",
                                                                         "dot",
                                                                         "vdot",
                                                                         "inner",
                                                                         "outer",
                                                                         "kron",
                                                                         "chain_matmul",
                                                                         "conv1d",
                                                                         "conv2d",
                                                                         "conv3d",
                                                                         "conv_transpose1d",
                                                                         "conv_transpose2d",
                                                                         "conv_transpose3d",
                                                                         "softmax",
                                                                         "log_softmax",
                                                                         "layer_norm",
                                                                         "group_norm",
                                                                         "batch_norm",
                                                                         "instance_norm",
                                                                         "rms_norm",
                                                                         "dropout",
                                                                         "embedding",
                                                                         "sum",
                                                                         "nansum",
                                                                         "mean",
                                                                         "nanmean",
                                                                         "var",
                                                                         "std",
                                                                         "var_mean",
                                                                         "std_mean",
                                                                         "prod",
                                                                         "max",
                                                                         "min",
                                                                         "amax",
                                                                         "amin",
                                                                         "aminmax",
                                                                         "argmax",
                                                                         "argmin",
                                                                         "maximum",
                                                                         "minimum",
                                                                         "fmax",
                                                                         "fmin",
                                                                         "logsumexp",
                                                                         "norm",
                                                                         "exp",
                                                                         "exp2",
                                                                         "expm1",
                                                                         "log",
                                                                         "log2",
                                                                         "log10",
                                                                         "log1p",
                                                                         "sigmoid",
                                                                         "tanh",
                                                                         "relu",
                                                                         "gelu",
                                                                         "silu",
                                                                         "selu",
                                                                         "celu",
                                                                         "erf",
                                                                         "erfc",
                                                                         "erfinv",
                                                                         "sqrt",
                                                                         "rsqrt",
                                                                         "square",
                                                                         "pow",
                                                                         "abs",
                                                                         "neg",
                                                                         "reciprocal",
                                                                         "sign",
                                                                         "sin",
                                                                         "cos",
                                                                         "tan",
                                                                         "floor",
                                                                         "ceil",
                                                                         "round",
                                                                         "trunc",
                                                                         "cumsum",
                                                                         "cumprod",
                                                                         "cummax",
                                                                         "cummin",
                                                                         "logcumsumexp",
                                                                         "sort",
                                                                         "argsort",
                                                                         "topk",
                                                                         "kthvalue",
                                                                         "median",
                                                                         "mode",
                                                                         "quantile",
                                                                         "where",
                                                                         "clamp",
                                                                         "clip",
                                                                         "add",
                                                                         "sub",
                                                                         "subtract",
                                                                         "mul",
                                                                         "multiply",
                                                                         "div",
                                                                         "divide",
                                                                         "true_divide",
                                                                         "floor_divide",
                                                                         "remainder",
                                                                         "fmod",
                                                                         "lerp",
                                                                         "addcmul",
                                                                         "addcdiv",
                                                                         "gather",
                                                                         "scatter",
                                                                         "scatter_add",
                                                                         "scatter_reduce",
                                                                         "index_select",
                                                                         "index_add",
                                                                         "take",
                                                                         "take_along_dim",
                                                                         "masked_fill",
                                                                         "masked_select",
                                                                         "nonzero",
                                                                         "unique",
                                                                         "bincount",
                                                                         "histc",
                                                                         "cdist",
                                                                         "cosine_similarity",
                                                                         "pairwise_distance",
                                                                         "tril",
                                                                         "triu",
                                                                         "diff",
                                                                         "flip",
                                                                         "roll",
                                                                         "eq",
                                                                         "ne",
                                                                         "lt",
                                                                         "le",
                                                                         "gt",
                                                                         "ge",
                                                                         "isclose",
                                                                         "allclose",
                                                                         "equal",
                                                                         "all",
                                                                         "any",
                                                                         "count_nonzero",
                                                                         "cross",
                                                                         "trace",
                                                                         "det",
                                                                         "inverse",
                                                                         "cholesky",
                                                                         "lu",
                                                                         "svd",
                                                                         "qr",
                                                                         "pinverse"});

// Compute submodules: any function in them is compute.
constexpr auto kComputeTorchModules = std::to_array<std::string_view>(
    {"torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.sparse", "torch.masked",
     "torch.signal", "torch._refs", "torch._prims", "torch._decomp", "torch.ops"});

// torch.ops entries that load code rather than compute (native-code reports them), and Inductor's view
// helper that generated code calls (an as_strided of the same storage).
constexpr auto kTorchOpsOwnedElsewhere = std::to_array<std::string_view>(
    {"torch.ops.load_library", "torch.ops.import_module", "torch.ops.inductor._reinterpret_tensor"});

// Tensor methods that compute (and their in-place forms with a trailing underscore). Views,
// layout changes, copies, fills, dtype/device moves and queries (view, reshape, contiguous, to,
// float, clone, copy_, fill_, zero_, size, stride, numel, data_ptr, item...) are not listed.
constexpr auto kComputeTensorMethods = std::to_array<std::string_view>({"abs",
                                                                        "absolute",
                                                                        "acos",
                                                                        "acosh",
                                                                        "add",
                                                                        "addbmm",
                                                                        "addcdiv",
                                                                        "addcmul",
                                                                        "addmm",
                                                                        "addmv",
                                                                        "addr",
                                                                        "all",
                                                                        "amax",
                                                                        "amin",
                                                                        "aminmax",
                                                                        "any",
                                                                        "apply_",
                                                                        "argmax",
                                                                        "argmin",
                                                                        "argsort",
                                                                        "asin",
                                                                        "asinh",
                                                                        "atan",
                                                                        "atan2",
                                                                        "atanh",
                                                                        "baddbmm",
                                                                        "bincount",
                                                                        "bmm",
                                                                        "ceil",
                                                                        "clamp",
                                                                        "clamp_max",
                                                                        "clamp_min",
                                                                        "clip",
                                                                        "cos",
                                                                        "cosh",
                                                                        "count_nonzero",
                                                                        "cross",
                                                                        "cummax",
                                                                        "cummin",
                                                                        "cumprod",
                                                                        "cumsum",
                                                                        "diff",
                                                                        "digamma",
                                                                        "dist",
                                                                        "div",
                                                                        "divide",
                                                                        "dot",
                                                                        "eq",
                                                                        "equal",
                                                                        "erf",
                                                                        "erfc",
                                                                        "erfinv",
                                                                        "exp",
                                                                        "exp2",
                                                                        "expm1",
                                                                        "floor",
                                                                        "floor_divide",
                                                                        "fmax",
                                                                        "fmin",
                                                                        "fmod",
                                                                        "frac",
                                                                        "gather",
                                                                        "ge",
                                                                        "gt",
                                                                        "histc",
                                                                        "hypot",
                                                                        "index_add",
                                                                        "index_copy",
                                                                        "index_fill",
                                                                        "index_put",
                                                                        "index_reduce",
                                                                        "index_select",
                                                                        "inner",
                                                                        "isclose",
                                                                        "allclose",
                                                                        "kthvalue",
                                                                        "le",
                                                                        "lerp",
                                                                        "lgamma",
                                                                        "log",
                                                                        "log10",
                                                                        "log1p",
                                                                        "log2",
                                                                        "log_softmax",
                                                                        "logaddexp",
                                                                        "logcumsumexp",
                                                                        "logical_and",
                                                                        "logical_not",
                                                                        "logical_or",
                                                                        "logical_xor",
                                                                        "logit",
                                                                        "logsumexp",
                                                                        "lt",
                                                                        "map_",
                                                                        "masked_fill",
                                                                        "masked_scatter",
                                                                        "masked_select",
                                                                        "matmul",
                                                                        "max",
                                                                        "maximum",
                                                                        "mean",
                                                                        "median",
                                                                        "min",
                                                                        "minimum",
                                                                        "mm",
                                                                        "mode",
                                                                        "mul",
                                                                        "multiply",
                                                                        "mv",
                                                                        "nan_to_num",
                                                                        "nanmean",
                                                                        "nanmedian",
                                                                        "nanquantile",
                                                                        "nansum",
                                                                        "ne",
                                                                        "neg",
                                                                        "negative",
                                                                        "nonzero",
                                                                        "norm",
                                                                        "outer",
                                                                        "pow",
                                                                        "prod",
                                                                        "quantile",
                                                                        "reciprocal",
                                                                        "relu",
                                                                        "remainder",
                                                                        "renorm",
                                                                        "round",
                                                                        "rsqrt",
                                                                        "scatter",
                                                                        "scatter_add",
                                                                        "scatter_reduce",
                                                                        "sigmoid",
                                                                        "sign",
                                                                        "sin",
                                                                        "sinh",
                                                                        "softmax",
                                                                        "sort",
                                                                        "sqrt",
                                                                        "square",
                                                                        "std",
                                                                        "sub",
                                                                        "subtract",
                                                                        "sum",
                                                                        "take",
                                                                        "take_along_dim",
                                                                        "tan",
                                                                        "tanh",
                                                                        "topk",
                                                                        "trace",
                                                                        "tril",
                                                                        "triu",
                                                                        "true_divide",
                                                                        "trunc",
                                                                        "unique",
                                                                        "var",
                                                                        "vdot",
                                                                        "where",
                                                                        "xlogy",
                                                                        "__matmul__",
                                                                        "__rmatmul__",
                                                                        "__imatmul__"});

// torch.nn classes whose instances hold parameters or other modules without computing when called
// (or are not callable): calling anything else computes.
constexpr auto kNeutralNnClasses =
    std::to_array<std::string_view>({"Module", "ModuleList", "ModuleDict", "Parameter", "ParameterList",
                                     "ParameterDict", "Buffer", "Identity", "Flatten", "Unflatten"});

// Methods that run a module's computation when called through its class or instance.
constexpr auto kModuleCallMethods = std::to_array<std::string_view>(
    {"forward", "__call__", "_call_impl", "_wrapped_call_impl", "_conv_forward"});

// Calls that build Python containers, whose methods share names with tensor methods (list.sort, set.add).
constexpr auto kContainerFactories = std::to_array<std::string_view>(
    {"builtins.list", "builtins.dict", "builtins.set", "builtins.frozenset", "builtins.tuple",
     "builtins.sorted", "builtins.str", "builtins.range", "builtins.enumerate", "builtins.zip"});

enum class Category : std::uint8_t { none, compute, data_movement };

struct Classification {
  Category category = Category::none;
  bool explicit_compute = false;  // named in a compute table, so references count too
};

bool starts_upper(std::string_view name) {
  return !name.empty() && std::isupper(static_cast<unsigned char>(name.front())) != 0;
}

std::string_view strip_in_place(std::string_view method) {
  if (method.size() > 1 && method.back() == '_' && !method.ends_with("__")) {
    method.remove_suffix(1);
  }
  return method;
}

bool is_compute_method(std::string_view method) {
  return in_table(kComputeTensorMethods, method) || in_table(kComputeTensorMethods, strip_in_place(method));
}

// A torch.nn.<Class> whose instances compute when called.
bool is_compute_module_class(std::string_view origin) {
  if (!is_static_origin(origin) || !in_module(origin, "torch.nn")) {
    return false;
  }
  const std::string_view name = last_component(origin);
  return starts_upper(name) && !in_table(kNeutralNnClasses, name) &&
         !in_module(origin, "torch.nn.functional");
}

// What a finding computes, as one name shared by its spellings: `torch.sum`, `x.sum()` and `x.sum_()`
// are "sum", `F.softmax` is "softmax", an `nn.LayerNorm` module is "LayerNorm", `@` is "matmul".
std::string compute_key(std::string_view origin_or_method) {
  return std::string(strip_in_place(last_component(origin_or_method)));
}

class TorchComputeChecker {
 public:
  TorchComputeChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity,
                      std::set<std::string, std::less<>> reference_keys = {})
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        findings_(findings),
        severity_(severity),
        reference_keys_(std::move(reference_keys)) {
    collect_custom_ops();
  }

  // The compute names reported so far (compute_key of each finding).
  const std::set<std::string, std::less<>>& keys() const { return keys_; }

  void run() {
    walk_reachable(context_, names_, [this](const source::Node& node, const FunctionBody& body) {
      if (const auto* call = source::node_cast<source::Call>(node)) {
        check_call(*call, body);
      } else if (const auto* binary = source::node_cast<source::BinOp>(node);
                 binary != nullptr && binary->op == source::BinaryOperator::matmul) {
        report(*binary, "matmul", "the `@` operator multiplies matrices through PyTorch (cuBLAS)", body);
      } else if (const auto* augmented = source::node_cast<source::AugAssign>(node);
                 augmented != nullptr && augmented->op == source::BinaryOperator::matmul) {
        report(*augmented, "matmul", "the `@=` operator multiplies matrices through PyTorch (cuBLAS)", body);
      } else if (is_reference_root(node, names_) && !is_called(node) &&
                 assignment_of_target(node, names_) == nullptr) {
        check_reference(source::as_expr(node), body);
      }
    });
  }

 private:
  // Ops that the candidate registers itself (@torch.library.custom_op / triton_op "ns::name"):
  // calling them through torch.ops runs the candidate's own (Triton) implementation.
  void collect_custom_ops() {
    source::walk(context_.module, [this](const source::Node& node) {
      if (const auto* def = source::node_cast<source::FunctionDef>(node)) {
        for (const auto& decorator : def->decorators) {
          const auto* call = source::node_cast<source::Call>(*decorator);
          if (call == nullptr || call->args.empty()) {
            continue;
          }
          const std::string registrar = names_.resolve(*call->func);
          const auto op_name = string_literal(call->args.front().get());
          const bool registers = in_module(registrar, "torch") &&
                                 (registrar.ends_with(".custom_op") || registrar.ends_with(".triton_op"));
          if (registers && op_name && op_name->find("::") != std::string::npos) {
            const std::size_t separator = op_name->find("::");
            custom_ops_.insert("torch.ops." + op_name->substr(0, separator) + "." +
                               op_name->substr(separator + 2));
          }
        }
      }
      return source::WalkAction::visit_children;
    });
  }

  bool is_custom_op(std::string_view origin) const {
    return std::any_of(custom_ops_.begin(), custom_ops_.end(),
                       [origin](const std::string& op) { return in_module(origin, op); });
  }

  bool is_called(const source::Node& node) const {
    const auto* call = source::node_cast<source::Call>(names_.parent(node));
    return call != nullptr && call->func.get() == &node;
  }

  Classification classify(std::string_view origin) const {
    if (!is_static_origin(origin) || !in_module(origin, "torch")) {
      return {};
    }
    if (in_module(origin, "torch.ops")) {
      if (module_match(origin, kTorchOpsOwnedElsewhere) || is_custom_op(origin) || origin == "torch.ops") {
        return {};
      }
      return {Category::compute, true};
    }
    if (module_match(origin, kComputeTorchModules)) {
      return {Category::compute, true};
    }
    if (origin == "torch") {
      return {};
    }
    const std::string_view rest = origin.substr(std::string_view("torch.").size());
    if (rest.starts_with("Tensor.")) {
      const std::string_view method = rest.substr(std::string_view("Tensor.").size());
      const bool computes = method.find('.') == std::string_view::npos && is_compute_method(method);
      return computes ? Classification{Category::compute, true} : Classification{};
    }
    if (in_module(origin, "torch.nn")) {
      // torch.nn.Linear.forward(module, x) and friends.
      const std::size_t dot = origin.rfind('.');
      const std::string_view owner = origin.substr(0, dot);
      if (is_compute_module_class(owner) && in_table(kModuleCallMethods, last_component(origin))) {
        return {Category::compute, true};
      }
      return {};
    }
    if (rest.find('.') != std::string_view::npos) {
      return {};  // other submodules: torch.cuda, torch.backends, torch.autograd, torch.utils...
    }
    if (in_table(kDataMovementTorchFunctions, rest)) {
      return {Category::data_movement, true};
    }
    if (in_table(kComputeTorchFunctions, rest) || in_table(kComputeTorchFunctions, strip_in_place(rest))) {
      return {Category::compute, true};
    }
    if (starts_upper(rest) || in_table(kNeutralTorchFunctions, rest) ||
        in_table(kTorchOwnedElsewhere, rest)) {
      return {};
    }
    if (rest.starts_with("float") || rest.starts_with("int") || rest.starts_with("uint") ||
        rest.starts_with("bfloat") || rest.starts_with("complex") || rest == "bool" || rest == "half" ||
        rest == "double" || rest == "long" || rest == "short" || rest == "cfloat" || rest == "cdouble") {
      return {};  // dtypes
    }
    return {Category::compute, false};
  }

  // What kind of object a method call's receiver is, for the tensor-method check.
  bool receiver_may_be_tensor(const source::Expr& receiver) const {
    if (receiver.kind() == source::NodeKind::string || receiver.kind() == source::NodeKind::list ||
        receiver.kind() == source::NodeKind::dict || receiver.kind() == source::NodeKind::set ||
        receiver.kind() == source::NodeKind::tuple || receiver.kind() == source::NodeKind::constant) {
      return false;
    }
    const std::size_t scope = names_.scope_of(receiver);
    const auto* name = source::node_cast<source::Name>(receiver);
    if (name != nullptr && names_.scope(scope).method_class && name->id == names_.scope(scope).self_name) {
      return false;  // self.method(): the candidate's own method
    }
    if (name != nullptr) {
      const Binding binding = names_.binding_of(*name);
      if (binding.kind == BindingKind::local) {
        const Scope& owner = names_.scope(*binding.scope);
        if (owner.functions.contains(name->id) || owner.classes.contains(name->id)) {
          return false;  // a function or class of the module
        }
      }
    }
    const std::string origin = names_.resolve(receiver);
    if (!origin.empty() && !in_module(origin, "torch")) {
      return false;  // another library's object (numpy, math, a builtin container...)
    }
    // Python containers and strings have methods of the same names (list.sort, set.add...).
    const std::vector<const source::Expr*> values = names_.values_of(receiver);
    bool all_containers = !values.empty();
    for (const source::Expr* value : values) {
      if (const auto* construction = source::node_cast<source::Call>(value)) {
        if (names_.class_named(*construction->func)) {
          return false;  // an instance of one of the candidate's classes
        }
        all_containers = all_containers && in_table(kContainerFactories, names_.resolve(*construction->func));
        continue;
      }
      const source::NodeKind kind = value->kind();
      all_containers =
          all_containers && (kind == source::NodeKind::list || kind == source::NodeKind::dict ||
                             kind == source::NodeKind::set || kind == source::NodeKind::tuple ||
                             kind == source::NodeKind::list_comp || kind == source::NodeKind::dict_comp ||
                             kind == source::NodeKind::set_comp || kind == source::NodeKind::string);
    }
    return !all_containers;
  }

  // The torch.nn module class whose instance `callee` may hold, or "".
  std::string held_module_class(const source::Expr& callee) const {
    for (const source::Expr* value : names_.values_of(callee)) {
      std::string found;
      source::walk(*value, [&](const source::Node& node) {
        if (const auto* call = source::node_cast<source::Call>(node); call != nullptr && found.empty()) {
          if (names_.class_named(*call->func)) {
            return source::WalkAction::skip_children;  // the candidate's own module class
          }
          const std::string origin = names_.resolve(*call->func);
          if (is_compute_module_class(origin)) {
            found = origin;
          }
        }
        return found.empty() ? source::WalkAction::visit_children : source::WalkAction::skip_children;
      });
      if (!found.empty()) {
        return found;
      }
    }
    return {};
  }

  // super().forward(x) in a class deriving from a computing torch.nn module.
  std::string computing_base_class(std::size_t scope) const {
    const auto method_class = names_.scope(scope).method_class;
    const auto* class_def =
        method_class ? source::node_cast<source::ClassDef>(names_.scope(*method_class).node) : nullptr;
    if (class_def == nullptr) {
      return {};
    }
    for (const auto& base : class_def->bases) {
      std::string origin = names_.resolve(*base);
      if (is_compute_module_class(origin)) {
        return origin;
      }
    }
    return {};
  }

  // A torch compute function that `callee` may hold through an alias, a self attribute or a
  // container of functions (`self._op = TABLE[name]` with TABLE = {"sum": torch.sum, ...}).
  std::string held_torch_function(const source::Expr& callee) const {
    for (const source::Expr* value : names_.values_of(callee)) {
      std::vector<const source::Node*> candidates{value};
      if (const auto* dict = source::node_cast<source::Dict>(value)) {
        for (const auto& entry : dict->values) {
          candidates.push_back(entry.get());
        }
      } else if (value->kind() == source::NodeKind::list || value->kind() == source::NodeKind::tuple ||
                 value->kind() == source::NodeKind::set) {
        const std::vector<const source::Node*> elements = source::children_of(*value);
        candidates.insert(candidates.end(), elements.begin(), elements.end());
      }
      for (const source::Node* candidate : candidates) {
        const auto* expr = source::expr_cast(candidate);
        std::string origin = expr != nullptr ? names_.resolve(*expr) : std::string();
        if (classify(origin).category == Category::compute) {
          return origin;
        }
      }
    }
    return {};
  }

  void check_call(const source::Call& call, const FunctionBody& body) {
    const source::Expr& callee = *call.func;
    const std::string origin = names_.resolve(callee);
    if (is_static_origin(origin)) {
      const Classification found = classify(origin);
      if (found.category == Category::compute) {
        report(call, compute_key(origin), describe(callee, origin) + " is PyTorch compute", body);
      } else if (found.category == Category::data_movement) {
        report_data_movement(call, describe(callee, origin), body);
      }
      return;
    }
    if (const auto* constructed = source::node_cast<source::Call>(callee)) {
      const std::string module_class = names_.resolve(*constructed->func);
      if (is_compute_module_class(module_class)) {
        report(call, compute_key(module_class),
               "calling a new `" + module_class + "` module runs PyTorch compute", body);
      }
      return;
    }
    const auto* method = source::node_cast<source::Attribute>(&callee);
    if (method != nullptr && in_table(kModuleCallMethods, method->attr)) {
      if (const auto* super_call = source::node_cast<source::Call>(method->value.get());
          super_call != nullptr && names_.resolve(*super_call->func) == "builtins.super") {
        const std::string base = computing_base_class(names_.scope_of(call));
        if (!base.empty()) {
          report(call, compute_key(base),
                 "`super()." + method->attr + "(...)` runs the `" + base + "` module's PyTorch compute",
                 body);
        }
        return;
      }
      const std::string module_class = held_module_class(*method->value);
      if (!module_class.empty()) {
        report(call, compute_key(module_class),
               "`" + spelling(callee) + "(...)` runs a `" + module_class + "` module (PyTorch compute)",
               body);
        return;
      }
    }
    if (const std::string module_class = held_module_class(callee); !module_class.empty()) {
      report(call, compute_key(module_class),
             "`" + spelling(callee) + "(...)` calls a `" + module_class + "` module (PyTorch compute)", body);
      return;
    }
    if (const std::string function = held_torch_function(callee); !function.empty()) {
      report(call, compute_key(function),
             "`" + spelling(callee) + "(...)` calls `" + function + "`, which is PyTorch compute", body);
      return;
    }
    if (method != nullptr && is_compute_method(method->attr) && receiver_may_be_tensor(*method->value)) {
      report(call, compute_key(method->attr),
             "`" + spelling(callee) + "(...)` calls the compute method `" + method->attr +
                 "` of a tensor (or of an array taken from one, computing on the host)",
             body);
    }
  }

  void check_reference(const source::Expr& reference, const FunctionBody& body) {
    const std::string origin = names_.resolve(reference);
    const Classification found = classify(origin);
    if (found.category == Category::compute && found.explicit_compute) {
      report(reference, compute_key(origin),
             describe(reference, origin) + " (PyTorch compute) is passed or stored as a function", body);
    }
  }

  void report(const source::Node& node, const std::string& key, const std::string& what,
              const FunctionBody& body) {
    keys_.insert(key);
    if (reference_keys_.contains(key)) {
      findings_.push_back(
          {std::string(TorchComputeInForwardRule::kId), Severity::warn,
           what + " on the path from ModelNew.forward (in `" + body.qualified_name +
               "`): the reference, itself a Triton program, computes `" + key +
               "` in PyTorch too; allowed up to the reference's own count per call, which the runtime "
               "stage checks (reference parity, docs/rules.md)",
           node.location});
      return;
    }
    findings_.push_back(
        {std::string(TorchComputeInForwardRule::kId), severity_,
         what + " on the path from ModelNew.forward (in `" + body.qualified_name +
             "`): the speedup must come from your Triton kernels, and work done by PyTorch/ATen/cuBLAS/cuDNN "
             "would be measured instead; compute it inside a @triton.jit kernel (allocation, views, "
             ".contiguous(), dtype/device moves and shape arithmetic are fine)",
         node.location});
  }

  void report_data_movement(const source::Node& node, const std::string& what, const FunctionBody& body) {
    findings_.push_back(
        {std::string(TorchComputeInForwardRule::kId), Severity::warn,
         what + " copies data through PyTorch on the path from ModelNew.forward (in `" + body.qualified_name +
             "`): allowed, but if this copy is part of the operation being measured, write the output from "
             "your Triton kernel directly",
         node.location});
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  std::vector<Finding>& findings_;
  Severity severity_;
  std::set<std::string, std::less<>> reference_keys_;  // compute the reference runs too (reference parity)
  std::set<std::string, std::less<>> keys_;
  std::set<std::string, std::less<>> custom_ops_;
};

}  // namespace

std::string_view TorchComputeInForwardRule::summary() const {
  return "no PyTorch compute (torch ops, nn.functional, nn modules, tensor compute methods, @) on the path "
         "from ModelNew.forward";
}

std::set<std::string, std::less<>> reference_compute_keys(const AnalysisContext& context) {
  if (context.problem_source.empty()) {
    return {};
  }
  try {
    const source::ParseResult parsed = source::parse_module(context.problem_source);
    if (!parsed.ok()) {
      return {};
    }
    const source::ModuleIndex index = source::build_module_index(*parsed.module, "Model");
    if (index.launched_kernels().empty()) {
      return {};  // a PyTorch reference: its compute is the op the candidate must write in Triton
    }
    const AnalysisContext reference(*parsed.module, index, context.problem_source);
    std::vector<Finding> unused;
    TorchComputeChecker checker(reference, unused, Severity::reject);
    checker.run();
    return checker.keys();
  } catch (const std::exception&) {
    return {};  // a problem too complex to index grants nothing
  }
}

void TorchComputeInForwardRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  TorchComputeChecker(context, findings, severity_for(context.profile), reference_compute_keys(context))
      .run();
}

}  // namespace kforge::rules
