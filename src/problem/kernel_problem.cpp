#include "problem/kernel_problem.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "source/python_parser.hpp"
#include "source/text_file.hpp"

namespace kforge::problem {
namespace {

using source::node_cast;

// The line that starts both generated parts; kernel_drop_in_text cuts there.
constexpr std::string_view kAdapterMarker = "# ---- kforge kernel mode:";
constexpr std::size_t kMinSeparatorLength = 20;  // a line of at least this many '#' and nothing else

// How the wrapper is called and what the verifier compares: what it returns, then the arguments it
// writes into (--writes), each given as a fresh copy so no input is modified in place.
std::string call_helper(const std::vector<int>& writes, const std::map<int, std::string>& keywords,
                        WrapperResult result) {
  std::string indices;
  for (const int index : writes) {
    indices += (indices.empty() ? "" : ", ") + std::to_string(index);
  }
  std::string names;
  for (const auto& [index, name] : keywords) {
    names += fmt::format("{}{}: \"{}\"", names.empty() ? "" : ", ", index, name);
  }
  return fmt::format(R"(_KF_WRITES = [{}]
_KF_KEYWORDS = {{{}}}
_KF_RESULT_IS_OUTPUT = {}  # False: the reference returned None, its outputs are the arguments it wrote


def _kf_invoke(entry, args):
    # Keyword-only parameters are passed by name, as the call the inputs were captured from passed them.
    positional = [value for index, value in enumerate(args) if index not in _KF_KEYWORDS]
    return entry(*positional, **{{name: args[index] for index, name in _KF_KEYWORDS.items() if index < len(args)}})


def _kf_private_copy(tensor, index):
    # kforge's judge swaps this for a copy between guard bytes in one reference run (writes outside show)
    return tensor.clone()


def _kf_call(entry, args):
    args = list(args)
    for index in _KF_WRITES:
        if index >= len(args) or not isinstance(args[index], torch.Tensor):
            raise IndexError(f"--writes {{index}}: argument {{index}} of {{len(args)}} is not a tensor")
        args[index] = _kf_private_copy(args[index], index)
    result = _kf_invoke(entry, args)
    kept = _KF_RESULT_IS_OUTPUT and result is not None
    outputs = ([result] if kept else []) + [args[index] for index in _KF_WRITES]
    if not outputs:
        raise RuntimeError("the wrapper returned None: name the arguments it writes into with --writes")
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
)",
                     indices, names, result == WrapperResult::kIgnored ? "False" : "True");
}

bool is_identifier(const std::string& name) {
  return !name.empty() &&
         (std::isalpha(static_cast<unsigned char>(name.front())) != 0 || name.front() == '_') &&
         std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
}

// Module-level names the file binds (functions, classes, assignments, imports are not needed).
struct ModuleNames {
  std::set<std::string> functions;
  std::set<std::string> assigned;  // classes and assigned names
  std::set<std::string> classes;
};

// What --entry may name: a module-level function, a name bound at module level (`fn = Fn.apply`), or an
// attribute of a module-level class (`Fn.apply`, an autograd Function).
bool names_a_callable(const ModuleNames& names, const std::string& entry) {
  const auto dot = entry.find('.');
  if (dot == std::string::npos) {
    return is_identifier(entry) && (names.functions.contains(entry) || names.assigned.contains(entry));
  }
  const auto owner = entry.substr(0, dot);
  return names.classes.contains(owner) && is_identifier(entry.substr(dot + 1));
}

ModuleNames module_names(const std::string& code, const std::filesystem::path& file) {
  const auto parsed = source::parse_module(code);
  if (!parsed.ok()) {
    throw std::invalid_argument(fmt::format("{} does not parse: {} at {}", file.string(),
                                            parsed.error->message, to_string(parsed.error->location)));
  }
  ModuleNames names;
  for (const auto& statement : parsed.module->body) {
    if (const auto* function = node_cast<source::FunctionDef>(statement.get())) {
      names.functions.insert(function->name);
    } else if (const auto* owner = node_cast<source::ClassDef>(statement.get())) {
      names.assigned.insert(owner->name);
      names.classes.insert(owner->name);
    } else if (const auto* assign = node_cast<source::Assign>(statement.get())) {
      for (const auto& target : assign->targets) {
        if (const auto* name = node_cast<source::Name>(target.get())) {
          names.assigned.insert(name->id);
        }
      }
    }
  }
  return names;
}

const std::set<std::string>& known_dtypes() {
  static const std::set<std::string> dtypes{"float16",   "bfloat16",   "float32", "float64",
                                            "complex64", "complex128", "int8",    "int16",
                                            "int32",     "int64",      "uint8",   "bool"};
  return dtypes;
}

// One entry of the spec's "inputs", checked; `where` names it in errors.
// An integer tensor's structure (a captured spec's): exact "values", or "unique"/"sorted" draws.
void check_integer_structure(const nlohmann::json& input, nlohmann::json& checked, const std::string& where) {
  const auto dtype = checked["dtype"].get<std::string>();
  const bool integer = dtype.starts_with("int") || dtype.starts_with("uint");
  if (const auto values = input.find("values"); values != input.end()) {
    if (!integer || !values->is_array() || !std::all_of(values->begin(), values->end(), [](const auto& item) {
          return item.is_number_integer();
        })) {
      throw std::invalid_argument(
          fmt::format(R"({}: "values" is a list of integers, for an integer tensor)", where));
    }
    checked["values"] = *values;
  }
  for (const char* flag : {"unique", "sorted"}) {
    if (const auto found = input.find(flag); found != input.end()) {
      if (!integer || !found->is_boolean()) {
        throw std::invalid_argument(
            fmt::format(R"({}: "{}" is true or false, for an integer tensor)", where, flag));
      }
      checked[flag] = *found;
    }
  }
}

// A dtype or device argument ({"torch_dtype": "float16"}, {"triton_dtype": "fp8e5"}, {"device": "cuda"}),
// checked; nullopt when `input` is none of these.
std::optional<nlohmann::json> checked_constant(const nlohmann::json& input, const std::string& where) {
  static const std::map<std::string, std::set<std::string>> kinds{
      {"torch_dtype",
       // values.py's DTYPES_BY_NAME: the dtypes an input may carry between processes
       {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
        "complex64", "complex128", "float8_e4m3fn", "float8_e5m2"}},
      {"triton_dtype",
       {"int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "fp8e4b15",
        "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"}},
      {"device", {}},   // any device: the evaluation's own is passed
      {"literal", {}},  // nested tuples and lists of scalars as Python writes them: `([1], [0])`
  };
  for (const auto& [kind, names] : kinds) {
    const auto found = input.find(kind);
    if (found == input.end()) {
      continue;
    }
    if (!found->is_string() || (!names.empty() && !names.contains(found->get<std::string>()))) {
      const auto expected = !names.empty()     ? fmt::format("one of {}", fmt::join(names, ", "))
                            : kind == "device" ? std::string("a device name")
                                               : std::string("a Python literal (a string)");
      throw std::invalid_argument(
          fmt::format(R"({}: "{}" is {}, not {})", where, kind, expected, found->dump()));
    }
    return nlohmann::json{{kind, *found}};
  }
  return std::nullopt;
}

nlohmann::json checked_input(const nlohmann::json& input, const std::set<std::string>& sizes,
                             const std::string& where, int depth = 0);

bool is_scalar(const nlohmann::json& item) {
  return item.is_number() || item.is_boolean() || item.is_string() || item.is_null();
}

// A list of attribute names ("parameters", "buffers") of an object argument, each one of its attributes.
nlohmann::json checked_attribute_names(const nlohmann::json& input, const char* key,
                                       const nlohmann::json& attributes, const std::string& where) {
  const auto found = input.find(key);
  if (found == input.end()) {
    return nlohmann::json::array();
  }
  if (!found->is_array() || !std::all_of(found->begin(), found->end(), [&](const nlohmann::json& name) {
        return name.is_string() && attributes.contains(name.get<std::string>());
      })) {
    throw std::invalid_argument(fmt::format(R"({}: "{}" lists names of its "attributes")", where, key));
  }
  return *found;
}

// An object argument ({"object": "LayerNorm", "torch_nn": true, "attributes": {...}}), each attribute an
// input entry of its own (docs/kernel-mode.md, "Object arguments").
constexpr int kMaxObjectDepth = 4;

nlohmann::json checked_object(const nlohmann::json& input, const std::set<std::string>& sizes,
                              const std::string& where, int depth) {
  const auto& name = input["object"];
  const auto attributes = input.find("attributes");
  if (!name.is_string() || attributes == input.end() || !attributes->is_object()) {
    throw std::invalid_argument(fmt::format(
        R"({}: an object argument is {{"object": "CLASS", "attributes": {{NAME: input, ...}}}})", where));
  }
  if (depth >= kMaxObjectDepth) {
    throw std::invalid_argument(fmt::format("{}: objects nest at most {} deep", where, kMaxObjectDepth));
  }
  const auto torch_nn = input.value("torch_nn", false);
  if (torch_nn && !is_identifier(name.get<std::string>())) {
    throw std::invalid_argument(
        fmt::format(R"({}: "object" names a torch.nn class, not {})", where, name.dump()));
  }
  nlohmann::json checked = {
      {"object", name}, {"torch_nn", torch_nn}, {"attributes", nlohmann::json::object()}};
  for (const auto& [attribute, item] : attributes->items()) {
    if (!is_identifier(attribute)) {
      throw std::invalid_argument(fmt::format("{}: attribute \"{}\" is not an identifier", where, attribute));
    }
    checked["attributes"][attribute] =
        checked_input(item, sizes, fmt::format("{}.{}", where, attribute), depth + 1);
  }
  checked["parameters"] = checked_attribute_names(input, "parameters", checked["attributes"], where);
  checked["buffers"] = checked_attribute_names(input, "buffers", checked["attributes"], where);
  return checked;
}

// A list or tuple of inputs ({"items": [input, ...], "sequence": "list"}): torch.hstack's `tensors`.
constexpr std::size_t kMaxSequenceItems = 1024;

nlohmann::json checked_sequence(const nlohmann::json& input, const std::set<std::string>& sizes,
                                const std::string& where, int depth) {
  const auto& items = input["items"];
  if (!items.is_array() || items.size() > kMaxSequenceItems) {
    throw std::invalid_argument(
        fmt::format(R"({}: "items" is a list of at most {} inputs (a sequence argument's items))", where,
                    kMaxSequenceItems));
  }
  if (depth >= kMaxObjectDepth) {
    throw std::invalid_argument(
        fmt::format("{}: sequences and objects nest at most {} deep", where, kMaxObjectDepth));
  }
  const auto sequence = input.find("sequence");
  if (sequence != input.end() && (!sequence->is_string() || (*sequence != "list" && *sequence != "tuple"))) {
    throw std::invalid_argument(fmt::format(R"({}: "sequence" is "tuple" or "list")", where));
  }
  nlohmann::json checked = {{"items", nlohmann::json::array()},
                            {"sequence", sequence == input.end() ? nlohmann::json("list") : *sequence}};
  for (std::size_t i = 0; i < items.size(); ++i) {
    checked["items"].push_back(checked_input(items[i], sizes, fmt::format("{}[{}]", where, i), depth + 1));
  }
  return checked;
}

nlohmann::json checked_input(const nlohmann::json& input, const std::set<std::string>& sizes,
                             const std::string& where, int depth) {
  if (!input.is_object()) {
    throw std::invalid_argument(
        fmt::format("{}: expected an object with shape and dtype, with value, or with object", where));
  }
  if (auto constant = checked_constant(input, where)) {
    return *constant;
  }
  if (input.contains("object")) {
    return checked_object(input, sizes, where, depth);
  }
  if (input.contains("items")) {
    return checked_sequence(input, sizes, where, depth);
  }
  if (input.contains("value")) {
    const auto& value = input["value"];
    if (value.is_object() && std::all_of(value.begin(), value.end(), is_scalar)) {
      return {{"value", value}};  // launch options by name (`**config.kwargs`)
    }
    if (value.is_array() && std::all_of(value.begin(), value.end(), is_scalar)) {
      // A tuple (the default) or a list of scalars: a window, strides, a block shape.
      const std::string sequence = input.value("sequence", std::string("tuple"));
      if (sequence != "tuple" && sequence != "list") {
        throw std::invalid_argument(fmt::format(R"({}: "sequence" is "tuple" or "list")", where));
      }
      return {{"value", value}, {"sequence", sequence}};
    }
    if (!is_scalar(value)) {
      throw std::invalid_argument(fmt::format(
          "{}: value must be a number, a boolean, a string, null, or a list or an object of those", where));
    }
    return {{"value", value}};
  }
  if (!input.contains("shape") || !input["shape"].is_array() || !input.contains("dtype") ||
      !input["dtype"].is_string()) {
    throw std::invalid_argument(fmt::format(R"({}: expected "shape": [...] and "dtype": "...")", where));
  }
  nlohmann::json checked = {{"shape", nlohmann::json::array()}, {"dtype", input["dtype"]}};
  if (!known_dtypes().contains(input["dtype"].get<std::string>())) {
    throw std::invalid_argument(
        fmt::format("{}: dtype {} is not one of float16, bfloat16, float32, float64, complex64, complex128, "
                    "int8, int16, int32, int64, uint8, bool",
                    where, input["dtype"].dump()));
  }
  for (const auto& dimension : input["shape"]) {
    const bool size_name = dimension.is_string() && sizes.contains(dimension.get<std::string>());
    if (!size_name && !(dimension.is_number_integer() && dimension.get<long long>() >= 0)) {
      throw std::invalid_argument(
          fmt::format("{}: a shape entry is a non-negative integer or a name from \"sizes\", not {}", where,
                      dimension.dump()));
    }
    checked["shape"].push_back(dimension);
  }
  for (const char* bound : {"low", "high"}) {
    if (input.contains(bound)) {
      const auto& value = input[bound];
      if (!value.is_number() && !(value.is_string() && sizes.contains(value.get<std::string>()))) {
        throw std::invalid_argument(
            fmt::format("{}: {} must be a number or a name from \"sizes\"", where, bound));
      }
      checked[bound] = input[bound];
    }
  }
  if (checked.contains("low") != checked.contains("high")) {
    throw std::invalid_argument(fmt::format("{}: give both low and high, or neither", where));
  }
  check_integer_structure(input, checked, where);
  return checked;
}

// An input passed by name ("keyword": "out", a keyword-only parameter of the wrapper), checked.
std::optional<std::string> keyword_of(const nlohmann::json& input, const std::string& where) {
  const auto found = input.is_object() ? input.find("keyword") : input.end();
  if (!input.is_object() || found == input.end()) {
    return std::nullopt;
  }
  if (!found->is_string() || !is_identifier(found->get<std::string>())) {
    throw std::invalid_argument(
        fmt::format(R"({}: "keyword" is a parameter name, not {})", where, found->dump()));
  }
  return found->get<std::string>();
}

// The spec's sizes (module constants of the problem), small sizes and inputs, as Python.
std::string spec_python(const std::string& spec_text, const std::string& where, const ModuleNames& names) {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(spec_text);
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(fmt::format("{} is not JSON: {}", where, error.what()));
  }
  if (!spec.is_object() || !spec.contains("inputs") || !spec["inputs"].is_array()) {
    throw std::invalid_argument(
        fmt::format("{}: expected an object with \"inputs\": [...] (docs/kernel-mode.md)", where));
  }
  std::set<std::string> sizes;
  std::string text;
  const auto object_at = [&](const char* key) {
    const auto found = spec.find(key);
    if (found == spec.end()) {
      return nlohmann::json::object();
    }
    if (!found->is_object()) {
      throw std::invalid_argument(fmt::format("{}: \"{}\" must be an object of NAME: integer", where, key));
    }
    return *found;
  };
  const auto size_table = object_at("sizes");
  const auto small_table = object_at("small");
  for (const auto& [name, value] : size_table.items()) {
    if (!is_identifier(name) || !value.is_number_integer()) {
      throw std::invalid_argument(
          fmt::format("{}: size {} must be an identifier with an integer value", where, name));
    }
    if (names.assigned.contains(name) || names.functions.contains(name)) {
      throw std::invalid_argument(fmt::format(
          "{}: size {} is also a module-level name of the kernel file; rename the size", where, name));
    }
    sizes.insert(name);
    text += fmt::format("{} = {}\n", name, value.get<long long>());
  }
  nlohmann::json small = nlohmann::json::object();
  for (const auto& [name, value] : small_table.items()) {
    if (!sizes.contains(name) || !value.is_number_integer()) {
      throw std::invalid_argument(
          fmt::format("{}: small size {} must be one of \"sizes\", with an integer value", where, name));
    }
    small[name] = value;
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (std::size_t i = 0; i < spec["inputs"].size(); ++i) {
    const auto input_where = fmt::format("{}: inputs[{}]", where, i);
    auto checked = checked_input(spec["inputs"][i], sizes, input_where);
    if (const auto keyword = keyword_of(spec["inputs"][i], input_where)) {
      checked["keyword"] = *keyword;
    }
    inputs.push_back(std::move(checked));
  }
  text += fmt::format("KFORGE_SMALL = {}\n", small.dump());
  // The spec's sizes, for the generalisation trial (the kernel file's own constants are not sizes).
  text += fmt::format("KFORGE_SIZE_NAMES = {}\n",
                      nlohmann::json(std::vector<std::string>(sizes.begin(), sizes.end())).dump());
  text += fmt::format("_KF_INPUT_SPEC = json.loads({})\n", nlohmann::json(inputs.dump()).dump());
  text += R"(

def _kf_dimension(dimension):
    return globals()[dimension] if isinstance(dimension, str) else dimension


def _kf_input(spec):
    if "torch_dtype" in spec:
        return getattr(torch, spec["torch_dtype"])
    if "triton_dtype" in spec:
        import triton.language

        return triton.language.dtype(spec["triton_dtype"])
    if "device" in spec:
        return torch.device(spec["device"])  # the judge passes its own device in its place
    if "literal" in spec:
        import ast

        return ast.literal_eval(spec["literal"])
    if "items" in spec:  # a list or tuple of inputs: torch.hstack's `tensors`
        items = [_kf_input(item) for item in spec["items"]]
        return tuple(items) if spec["sequence"] == "tuple" else items
    if "value" in spec:
        value = spec["value"]
        return tuple(value) if spec.get("sequence") == "tuple" else value
    if "object" in spec:  # a module or config argument: a torch.nn module, else a namespace of its attributes
        from kforge.worker.argument_objects import build

        attributes = {name: _kf_input(item) for name, item in spec["attributes"].items()}
        return build(spec["object"] if spec["torch_nn"] else "", attributes, spec["parameters"], spec["buffers"])
    shape = [_kf_dimension(dimension) for dimension in spec["shape"]]
    dtype = getattr(torch, spec["dtype"])
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dtype.is_complex:
        return torch.randn(shape, dtype=dtype)
    if dtype.is_floating_point:
        if "low" in spec:
            low, high = _kf_dimension(spec["low"]), _kf_dimension(spec["high"])
            return (torch.rand(shape) * (high - low) + low).to(dtype)
        return torch.randn(shape).to(dtype)
    low, high = int(_kf_dimension(spec.get("low", 0))), int(_kf_dimension(spec.get("high", 128)))
    count = 1
    for dimension in shape:
        count *= dimension
    if len(spec.get("values", [])) == count and count > 0:  # as captured: values tied to each other
        return torch.tensor(spec["values"], dtype=dtype).reshape(shape)
    if spec.get("unique") and high - low >= count:  # distinct (scatter destinations, a permutation)
        values = torch.randperm(high - low)[:count] + low
    else:
        values = torch.randint(low, high, (count,))
    if spec.get("sorted"):
        values = values.sort().values
    return values.to(dtype).reshape(shape)


def get_inputs():
    return [_kf_input(spec) for spec in _KF_INPUT_SPEC]
)";
  return text;
}

}  // namespace

KernelFileParts split_test_block(std::string_view source) {
  std::size_t line_start = 0;
  while (line_start < source.size()) {
    auto line_end = source.find('\n', line_start);
    line_end = line_end == std::string_view::npos ? source.size() : line_end;
    auto line = source.substr(line_start, line_end - line_start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    if (line.size() >= kMinSeparatorLength && line.find_first_not_of('#') == std::string_view::npos) {
      return {std::string(source.substr(0, line_start)), std::string(source.substr(line_start))};
    }
    line_start = line_end + 1;
  }
  return {std::string(source), {}};
}

std::vector<int> inferred_writes(const ObservedCall& call, const std::string& entry, std::string_view where) {
  if (call.returns_none && call.writes.empty()) {
    throw std::invalid_argument(fmt::format(
        "{} returned None and wrote none of its tensor arguments in {}: kforge has no output to compare "
        "(name the arguments it writes with --writes, or give it inputs it writes into)",
        entry, where));
  }
  return call.writes;
}

WrapperResult observed_result(const ObservedCall& call) {
  return call.returns_none ? WrapperResult::kIgnored : WrapperResult::kUnlessNone;
}

std::string kernel_problem_text(const KernelReference& reference) {
  const auto parts = split_test_block(source::read_text_file(reference.file));
  const auto names = module_names(parts.code, reference.file);
  if (!names_a_callable(names, reference.entry)) {
    throw std::invalid_argument(
        fmt::format("{} has no module-level function {}; --entry names the wrapper that "
                    "launches the kernels (a function, a module-level name, or Class.apply)",
                    reference.file.string(), reference.entry));
  }
  if (!reference.spec && !reference.spec_text && !names.functions.contains("get_inputs")) {
    throw std::invalid_argument(fmt::format(
        "{} has no get_inputs(); give --inputs SPEC.json (shapes, dtypes, ranges) or add a get_inputs() that "
        "returns the wrapper's arguments (docs/kernel-mode.md)",
        reference.file.string()));
  }
  std::string text = parts.code;
  if (!text.empty() && text.back() != '\n') {
    text += '\n';
  }
  text += fmt::format("\n\n{} the reference: {} of {} (generated; the file's code above is unchanged)\n",
                      kAdapterMarker, reference.entry, reference.file.filename().string());
  text += "import json\n\nimport torch\n\n";
  std::map<int, std::string> keywords;
  if (reference.spec_text) {
    text += spec_python(*reference.spec_text, "the captured inputs", names);
    keywords = spec_keywords(*reference.spec_text);
  } else if (reference.spec) {
    const auto spec_text = source::read_text_file(*reference.spec);
    text += spec_python(spec_text, reference.spec->string(), names);
    keywords = spec_keywords(spec_text);
  }
  if (!names.functions.contains("get_init_inputs")) {
    text += "\n\ndef get_init_inputs():\n    return []\n";
  }
  text += fmt::format(
      "\n\n{}\n\nclass Model(torch.nn.Module):\n    def forward(self, *args):\n"
      "        return _kf_call({}, args)\n",
      call_helper(reference.writes, keywords, reference.result), reference.entry);
  return text;
}

std::map<int, std::string> spec_keywords(std::string_view spec_text) {
  std::map<int, std::string> keywords;
  const auto spec = nlohmann::json::parse(spec_text, nullptr, false);
  if (!spec.is_object() || !spec.contains("inputs") || !spec["inputs"].is_array()) {
    return keywords;  // kernel_problem_text reports a malformed spec
  }
  for (std::size_t i = 0; i < spec["inputs"].size(); ++i) {
    if (auto keyword = keyword_of(spec["inputs"][i], fmt::format("inputs[{}]", i))) {
      keywords.emplace(static_cast<int>(i), std::move(*keyword));
    }
  }
  return keywords;
}

std::string kernel_candidate_text(std::string_view variant_source, const std::string& entry,
                                  const std::vector<int>& writes, const std::map<int, std::string>& keywords,
                                  WrapperResult result) {
  auto text = split_test_block(variant_source).code;
  if (!text.empty() && text.back() != '\n') {
    text += '\n';
  }
  return text + fmt::format(
                    "\n\n{} the candidate's adapter (generated; not part of the drop-in file)\n"
                    "import torch\n\n\n{}\n\nclass ModelNew(torch.nn.Module):\n"
                    "    def forward(self, *args):\n        return _kf_call({}, args)\n",
                    kAdapterMarker, call_helper(writes, keywords, result), entry);
}

std::string kernel_drop_in_text(std::string_view candidate_text, std::string_view test_block) {
  auto marker = candidate_text.rfind(kAdapterMarker);
  auto code = std::string(
      candidate_text.substr(0, marker == std::string_view::npos ? candidate_text.size() : marker));
  while (code.size() >= 2 && code.ends_with("\n\n")) {
    code.pop_back();  // the blank lines the adapter put before itself
  }
  return test_block.empty() ? code : code + "\n\n" + std::string(test_block);
}

}  // namespace kforge::problem
