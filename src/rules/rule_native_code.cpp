#include "rules/rule_native_code.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that load native code, compile with another compiler or ship prebuilt GPU kernels:
// their import is reported.
constexpr auto kNativeCodeModules = std::to_array<std::string_view>(
    {// foreign function interfaces and CUDA bindings
     "ctypes", "_ctypes", "cffi", "_cffi_backend", "pycuda", "cuda", "cupy", "cupyx", "numba", "llvmlite",
     "nvmath",
     // other compilers and frameworks
     "tvm", "jax", "jaxlib", "tensorflow", "tensorrt", "torch_tensorrt", "onnxruntime", "warp", "taichi",
     "mlx", "tilelang", "cutlass", "cutlass_library",
     // prebuilt kernel libraries
     "flash_attn", "flash_attn_interface", "xformers", "apex", "liger_kernel", "bitsandbytes", "deepspeed",
     "vllm", "transformer_engine", "sageattention", "flashinfer", "torchao",
     // PyTorch compilers, extensions and internals
     "torch.utils.cpp_extension", "torch.cuda.jiterator", "torch._C", "torch._dynamo", "torch._inductor",
     "torch._ops", "torch._export", "torch.export", "torch.compiler",
     // Triton's ahead-of-time tools
     "triton.tools",
     // the evaluator itself
     "kforge"});

// Reported at each use.
constexpr auto kNativeCodeMembers = std::to_array<std::string_view>(
    {"torch.compile", "torch.jit", "torch.library.Library", "torch.library.impl", "torch.library.define",
     "torch.library.register_kernel", "torch.library.fallthrough_kernel", "torch.library.impl_abstract",
     "torch.ops.load_library", "torch.ops.import_module", "torch.classes.load_library", "torch.cuda.cudart",
     "triton.compile", "triton.compiler"});

// torch.jit helpers that only mark code for TorchScript and never compile or run anything, and what
// Inductor-generated Triton code imports from PyTorch's internals: an allocator, the current stream's
// handle, size and alignment assertions, and its library of @triton.jit helpers (code nobody on the team
// wrote, TritonBench-G's fused_layernorm_triton for one, used them and was rejected for it).
constexpr auto kExceptions = std::to_array<std::string_view>(
    {"torch.jit.is_scripting", "torch.jit.is_tracing", "torch.jit.ignore", "torch.jit.unused",
     "torch.jit.annotate", "torch.jit.Final", "torch.jit.export", "torch._C._cuda_getCurrentRawStream",
     "torch._C._dynamo.guards._empty_strided_cuda", "torch._C._dynamo.guards._empty_strided_cpu",
     "torch._C._dynamo.guards.assert_size_stride", "torch._C._dynamo.guards.assert_alignment",
     "torch._inductor.runtime.triton_helpers"});

// The tables hashed once, on first use.
const ForbiddenApi& native_code_api() {
  static const ForbiddenApi api(kNativeCodeModules, kNativeCodeMembers, kExceptions);
  return api;
}

// Methods that load a compiled binary whatever the receiver (Triton's driver utils).
constexpr auto kLoadMethods = std::to_array<std::string_view>({"load_binary"});

constexpr std::string_view kNativeCodeWhy =
    ": kforge measures Triton kernels, and native code, other compilers or prebuilt kernel libraries would "
    "do the work (or reach into the process) outside what it can check; write the computation as "
    "@triton.jit kernels";

}  // namespace

std::string_view NativeCodeRule::summary() const {
  return "no native code, other compilers or kernel libraries (ctypes, cpp_extension, torch.compile, "
         "cupy...)";
}

void NativeCodeRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const ResolverHandle resolver(context);
  const NameResolver& names = resolver.get();
  const Severity severity = severity_for(context.profile);
  FindingSink sink(kId, findings);
  scan_forbidden_api(
      context, names, native_code_api(),
      [&](const ForbiddenImport& import) {
        sink.add(severity, import_subject(import) + std::string(kNativeCodeWhy), import.statement->location);
      },
      [&](const source::Expr& use, const Resolved& resolved) {
        sink.add(severity,
                 describe(use, resolved.origin) + " runs native or separately compiled code" +
                     std::string(kNativeCodeWhy),
                 use.location);
      });
  source::walk(context.module, [&](const source::Node& node) {
    if (const auto* attribute = source::node_cast<source::Attribute>(node);
        attribute != nullptr && in_table(kLoadMethods, attribute->attr)) {
      sink.add(severity,
               "`" + spelling(*attribute) + "` loads a compiled binary" + std::string(kNativeCodeWhy),
               attribute->location);
    }
    return source::WalkAction::visit_children;
  });
}

}  // namespace kforge::rules
