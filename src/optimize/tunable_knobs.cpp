#include "optimize/tunable_knobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optimize/autotune_configs.hpp"
#include "optimize/launch_arguments.hpp"
#include "optimize/name_bindings.hpp"
#include "optimize/program_order.hpp"
#include "source/module_index.hpp"
#include "source/offset_cursor.hpp"
#include "source/python_parser.hpp"

namespace kforge::optimize {
namespace {

using source::node_cast;

// Module constants (NAME = 128 at module level) and attributes (class body `X = 4`, or `self.X = 4`).
struct Bindings {
  NameBindings module;
  NameBindings attributes;
};

void collect_attribute_assignments(const source::ClassDef& owner, Bindings& bindings) {
  source::walk(owner, [&](const source::Node& node) {
    if (const auto* assign = node_cast<source::Assign>(&node)) {
      for (const auto& target : assign->targets) {
        if (const auto* attribute = node_cast<source::Attribute>(target.get());
            attribute != nullptr && source::dotted_name(*attribute->value) == "self") {
          record_binding(
              bindings.attributes, attribute->attr, assign->value.get(),
              fmt::format("attribute self.{} at {}", attribute->attr, to_string(assign->location)));
        }
      }
    }
    return source::WalkAction::visit_children;
  });
  for (const auto& statement : owner.body) {
    if (const auto* assign = node_cast<source::Assign>(statement.get())) {
      for (const auto& target : assign->targets) {
        if (const auto* name = node_cast<source::Name>(target.get())) {
          record_binding(
              bindings.attributes, name->id, assign->value.get(),
              fmt::format("class attribute {}.{} at {}", owner.name, name->id, to_string(assign->location)));
        }
      }
    }
  }
}

Bindings collect_bindings(const source::Module& module) {
  Bindings bindings;
  for (const auto& statement : module.body) {
    if (const auto* assign = node_cast<source::Assign>(statement.get())) {
      for (const auto& target : assign->targets) {
        if (const auto* name = node_cast<source::Name>(target.get())) {
          record_binding(bindings.module, name->id, assign->value.get(),
                         fmt::format("module constant {} at {}", name->id, to_string(assign->location)));
        }
      }
    } else if (const auto* owner = node_cast<source::ClassDef>(statement.get())) {
      collect_attribute_assignments(*owner, bindings);
    }
  }
  return bindings;
}

std::optional<KnobKind> kind_of(const std::string& keyword) {
  if (keyword == "num_warps") {
    return KnobKind::num_warps;
  }
  if (keyword == "num_stages") {
    return KnobKind::num_stages;
  }
  std::string upper;
  std::transform(keyword.begin(), keyword.end(), std::back_inserter(upper),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper.find("GROUP") != std::string::npos) {
    return KnobKind::group_size;
  }
  const bool size_like = upper.find("BLOCK") != std::string::npos ||
                         upper.find("TILE") != std::string::npos || upper.ends_with("_SIZE") ||
                         upper.find("SPLIT") != std::string::npos;
  return size_like ? std::optional<KnobKind>(KnobKind::block_size) : std::nullopt;
}

// The launch options a launch may compute or leave out, with Triton's value when it is left out.
struct LaunchOption {
  std::string_view name;
  KnobKind kind;
  long long fallback;
};
constexpr std::array kLaunchOptions{LaunchOption{"num_warps", KnobKind::num_warps, kDefaultNumWarps},
                                    LaunchOption{"num_stages", KnobKind::num_stages, kDefaultNumStages}};

bool power_of_two(long long value) { return value > 0 && (value & (value - 1)) == 0; }

std::vector<long long> choices_for(KnobKind kind, long long value) {
  std::set<long long> values{value};
  switch (kind) {
    case KnobKind::num_warps:
      values.insert({1, 2, 4, 8, 16});
      break;
    case KnobKind::num_stages:
      values.insert({1, 2, 3, 4, 5});
      break;
    case KnobKind::autotune_config:
      break;  // set from the list's length
    case KnobKind::group_size:
      values.insert({1, 4, 8, 16});
      break;
    case KnobKind::program_order:
      values.insert(kProgramOrders.begin(), kProgramOrders.end());
      break;
    case KnobKind::block_size:
      for (long long candidate = 16; candidate <= 16384; candidate *= 2) {
        values.insert(candidate);
      }
      break;
  }
  return {values.begin(), values.end()};
}

// The tl.constexpr parameters of each kernel.
std::map<std::string, std::set<std::string>, std::less<>> constexpr_parameters(
    const source::ModuleIndex& index) {
  std::map<std::string, std::set<std::string>, std::less<>> parameters;
  for (const auto& kernel : index.kernels) {
    auto& names = parameters[kernel.name];
    if (kernel.definition == nullptr) {
      continue;
    }
    for (const auto& parameter : kernel.definition->params) {
      if (parameter->annotation && source::dotted_name(*parameter->annotation).ends_with("constexpr")) {
        names.insert(parameter->name);
      }
    }
  }
  return parameters;
}

class KnobFinder {
 public:
  KnobFinder(const source::ModuleIndex& index, Bindings bindings)
      : index_(index), bindings_(std::move(bindings)), constexprs_(constexpr_parameters(index)) {}

  KnobSearch run(std::string_view source, const source::Module& module) {
    source_ = source;
    for (const auto& list : find_autotune_configs(source, module, index_, search_.fixed)) {
      add_autotune_knobs(list);
    }
    visit_scope(module);
    // After the literals: a listing and the tuner's priority meet the knobs the author wrote first.
    std::move(option_knobs_.begin(), option_knobs_.end(), std::back_inserter(search_.knobs));
    return std::move(search_);
  }

 private:
  // The launches under `root`, each read with the local names of the function it is in (locals_).
  void visit_scope(const source::Node& root) {
    source::walk(root, [&](const source::Node& node) {
      if (const auto* function = node_cast<source::FunctionDef>(&node);
          function != nullptr && &node != &root) {
        const auto locals = local_bindings(*function);
        const auto* outer = std::exchange(locals_, &locals);
        visit_scope(*function);
        locals_ = outer;
        return source::WalkAction::skip_children;
      }
      if (const auto* call = node_cast<source::Call>(&node)) {
        inspect_launch(*call);
      }
      return source::WalkAction::visit_children;
    });
  }

  void inspect_launch(const source::Call& call) {
    const auto* subscript = node_cast<source::Subscript>(call.func.get());
    if (subscript == nullptr) {
      return;
    }
    auto kernel = source::dotted_name(*subscript->value);
    kernel = kernel.substr(kernel.rfind('.') + 1);  // self.kernel and module.kernel launch `kernel`
    const auto* info = index_.find_kernel(kernel);
    if (info == nullptr) {
      return;
    }
    const auto& constexprs = constexprs_[kernel];
    for (const auto& keyword : call.keywords) {
      const auto kind = kind_of(keyword->name);
      const bool launch_option = keyword->name == "num_warps" || keyword->name == "num_stages";
      if (keyword->name.empty() || (!launch_option && !constexprs.contains(keyword->name))) {
        continue;
      }
      if (!kind) {
        continue;  // a constexpr that selects behaviour (an activation, a flag), not a size
      }
      if (info->autotuned && !launch_option) {
        search_.fixed.push_back(
            fmt::format("{} of {}: set by the kernel's triton.autotune configs", keyword->name, kernel));
        continue;
      }
      if (launch_option && !info->autotuned && literal_of(*keyword->value, "").first == nullptr) {
        continue;  // computed at run time: a launch option knob below
      }
      add_knob(kernel, *keyword, *kind, call.location);
    }
    if (!info->autotuned) {  // an autotuned kernel's configs set its warps and stages
      add_launch_option_knobs(kernel, call);
    }
  }

  // num_warps and num_stages of a launch that computes them at run time or leaves them out.
  void add_launch_option_knobs(const std::string& kernel, const source::Call& call) {
    if (!tokens_) {
      tokens_ = source::tokenize(source_);
    }
    const auto arguments = launch_arguments(source_, tokens_->tokens, call);
    const auto launch = fmt::format("launch of {} at {}", kernel, to_string(call.location));
    for (const auto& option : kLaunchOptions) {
      const std::string name(option.name);
      const KnobKind kind = option.kind;
      const long long fallback = option.fallback;
      const auto given = std::find_if(call.keywords.begin(), call.keywords.end(),
                                      [&](const auto& keyword) { return keyword->name == name; });
      if (given != call.keywords.end() && literal_of(*(*given)->value, "").first != nullptr) {
        continue;  // a literal: a knob of its own
      }
      if (!arguments) {
        search_.fixed.push_back(
            fmt::format("{} of the {}: its arguments could not be delimited", name, launch));
        continue;
      }
      if (given == call.keywords.end()) {
        add_absent_option(kernel, name, kind, fallback, launch, *arguments);
        continue;
      }
      const auto written = std::find_if(arguments->keywords.begin(), arguments->keywords.end(),
                                        [&](const LaunchKeyword& keyword) { return keyword.name == name; });
      if (written == arguments->keywords.end()) {
        search_.fixed.push_back(fmt::format("{} of the {}: its text could not be delimited", name, launch));
        continue;
      }
      std::vector<long long> choices = choices_for(kind, fallback);
      choices.insert(choices.begin(), kRunTimeValue);
      option_knobs_.push_back(Knob{
          name,
          kind,
          fmt::format("{}, computed at run time as `{}` ({} keeps it)", launch, written->text, kRunTimeValue),
          {kernel},
          written->location,
          written->text,
          kRunTimeValue,
          std::move(choices),
          {},
          {},
          KnobSite::run_time});
    }
  }

  void add_absent_option(const std::string& kernel, const std::string& name, KnobKind kind,
                         long long fallback, const std::string& launch, const LaunchArguments& arguments) {
    if (arguments.double_star || !arguments.any) {
      search_.fixed.push_back(fmt::format("{} of the {}: not given, and {}", name, launch,
                                          arguments.double_star
                                              ? "a ** argument may give it"
                                              : "the launch has no argument to add it after"));
      return;
    }
    option_knobs_.push_back(Knob{name,
                                 kind,
                                 fmt::format("{}, not given (Triton's default {})", launch, fallback),
                                 {kernel},
                                 arguments.after_last,
                                 "",
                                 fallback,
                                 choices_for(kind, fallback),
                                 {},
                                 {},
                                 KnobSite::absent});
  }

  // Several configs: one knob that pins each in turn. A single config: its values are literals like a
  // launch's (the autotuner has nothing to choose), so its sizes, warps and stages are knobs.
  void add_autotune_knobs(const AutotuneConfigList& list) {
    if (list.configs.size() > 1) {
      if (auto* shared = knob_at(list.location)) {  // one CONFIGS list decorating several kernels
        shared->kernels.push_back(list.kernel);
        return;
      }
      std::vector<long long> choices{-1};
      for (std::size_t i = 0; i < list.configs.size(); ++i) {
        choices.push_back(static_cast<long long>(i));
      }
      search_.knobs.push_back(Knob{"configs",
                                   KnobKind::autotune_config,
                                   list.where,
                                   {list.kernel},
                                   list.location,
                                   list.text,
                                   -1,
                                   std::move(choices),
                                   list.configs,
                                   {},
                                   KnobSite::literal});
      return;
    }
    const auto& config = *node_cast<source::Call>(list.list->elements.front().get());
    const std::string where =
        fmt::format("the only autotune config of {} at {}", list.kernel, to_string(config.location));
    if (const auto* values =
            config.args.empty() ? nullptr : node_cast<source::Dict>(config.args.front().get())) {
      for (std::size_t i = 0; i < values->keys.size() && i < values->values.size(); ++i) {
        const auto name = plain_string(values->keys[i].get());
        const auto kind = name ? kind_of(*name) : std::nullopt;
        if (kind && (*kind == KnobKind::block_size || *kind == KnobKind::group_size)) {
          add_literal_knob(list.kernel, *name, *kind, node_cast<source::Constant>(values->values[i].get()),
                           where);
        }
      }
    }
    for (const auto& keyword : config.keywords) {
      if (keyword->name == "num_warps" || keyword->name == "num_stages") {
        add_literal_knob(list.kernel, keyword->name, *kind_of(keyword->name),
                         node_cast<source::Constant>(keyword->value.get()), where);
      }
    }
  }

  // The text of a plain string literal ('BLOCK_M'), or nullopt.
  static std::optional<std::string> plain_string(const source::Expr* expr) {
    const auto* literal = node_cast<source::StringLiteral>(expr);
    if (literal == nullptr || literal->parts.size() != 1) {
      return std::nullopt;
    }
    const std::string& part = literal->parts.front();
    if (part.size() < 2 || (part.front() != '\'' && part.front() != '"') || part.back() != part.front()) {
      return std::nullopt;
    }
    return part.substr(1, part.size() - 2);
  }

  void add_literal_knob(const std::string& kernel, const std::string& name, KnobKind kind,
                        const source::Constant* literal, const std::string& where) {
    const auto value = literal != nullptr ? integer_value(*literal) : std::nullopt;
    if (!value || (kind == KnobKind::block_size && !power_of_two(*value))) {
      search_.fixed.push_back(
          fmt::format("{} in {}: {}", name, where, value ? "not a power of two" : "not a literal"));
      return;
    }
    if (auto* shared = knob_at(literal->location)) {
      shared->kernels.push_back(kernel);
      return;
    }
    search_.knobs.push_back(Knob{name,
                                 kind,
                                 where,
                                 {kernel},
                                 literal->location,
                                 literal->text,
                                 *value,
                                 choices_for(kind, *value),
                                 {},
                                 {},
                                 KnobSite::literal});
  }

  // The knob already found at `location` (a literal or list several kernels share), or null.
  Knob* knob_at(source::SourceLocation location) {
    const auto found = std::find_if(search_.knobs.begin(), search_.knobs.end(),
                                    [&](const Knob& knob) { return knob.location == location; });
    return found == search_.knobs.end() ? nullptr : &*found;
  }

  // The literal a keyword's value comes from, or why it has none.
  std::pair<const source::Constant*, std::string> literal_of(const source::Expr& value,
                                                             const std::string& launch) {
    if (const auto* constant = node_cast<source::Constant>(&value)) {
      return {integer_value(*constant) ? constant : nullptr, launch};
    }
    const NameBindings* table = nullptr;
    std::string name;
    if (const auto* plain = node_cast<source::Name>(&value)) {
      const bool local = locals_ != nullptr && locals_->contains(plain->id);  // Python's scoping
      table = local ? locals_ : &bindings_.module;
      name = plain->id;
    } else if (const auto* attribute = node_cast<source::Attribute>(&value)) {
      table = &bindings_.attributes;
      name = attribute->attr;
    }
    const auto found = table != nullptr ? table->find(name) : bindings_.module.end();
    if (table == nullptr || found == table->end()) {
      return {nullptr, "computed at run time"};
    }
    if (found->second.assignments != 1) {
      return {nullptr, fmt::format("{} is assigned {} times", name, found->second.assignments)};
    }
    if (found->second.literal == nullptr) {
      return {nullptr, fmt::format("computed at run time ({})", found->second.where)};
    }
    return {found->second.literal, found->second.where};
  }

  void add_knob(const std::string& kernel, const source::Keyword& keyword, KnobKind kind,
                source::SourceLocation launch) {
    const auto launch_text = fmt::format("launch of {} at {}", kernel, to_string(launch));
    const auto source_of_value = literal_of(*keyword.value, launch_text);
    const source::Constant* literal = source_of_value.first;
    const std::string& where = source_of_value.second;
    const auto value = literal != nullptr ? integer_value(*literal) : std::nullopt;
    if (!value || (kind == KnobKind::block_size && !power_of_two(*value))) {
      search_.fixed.push_back(
          fmt::format("{} of the {}: {}", keyword.name, launch_text, value ? "not a power of two" : where));
      return;
    }
    Knob* existing = knob_at(literal->location);
    if (existing == nullptr) {
      search_.knobs.push_back(Knob{keyword.name,
                                   kind,
                                   where,
                                   {},
                                   literal->location,
                                   literal->text,
                                   *value,
                                   choices_for(kind, *value),
                                   {},
                                   {},
                                   KnobSite::literal});
      existing = &search_.knobs.back();
    }
    if (std::find(existing->kernels.begin(), existing->kernels.end(), kernel) == existing->kernels.end()) {
      existing->kernels.push_back(kernel);
    }
  }

  const source::ModuleIndex& index_;
  Bindings bindings_;
  std::map<std::string, std::set<std::string>, std::less<>> constexprs_;
  KnobSearch search_;
  std::vector<Knob> option_knobs_;        // launch options computed at run time or left out
  const NameBindings* locals_ = nullptr;  // of the function whose launches are being read
  std::string_view source_;
  std::optional<source::TokenizeResult> tokens_;  // tokenized once, when a launch option needs its text
};

// Byte offset of a 1-based line and code-point column.
std::size_t byte_offset(std::string_view text, source::SourceLocation location) {
  const auto offset = source::OffsetCursor(text).offset_of(location);
  if (!offset) {
    throw std::invalid_argument(fmt::format("the source has no line {}", location.line));
  }
  return *offset;
}

}  // namespace

std::string_view knob_kind_name(KnobKind kind) {
  switch (kind) {
    case KnobKind::group_size:
      return "group_size";
    case KnobKind::num_warps:
      return "num_warps";
    case KnobKind::num_stages:
      return "num_stages";
    case KnobKind::autotune_config:
      return "autotune_config";
    case KnobKind::program_order:
      return "program_order";
    case KnobKind::block_size:
      break;
  }
  return "block_size";
}

KnobSearch find_knobs(std::string_view source) {
  const auto parsed = source::parse_module(source);
  if (!parsed.ok()) {
    throw std::invalid_argument(fmt::format("the candidate does not parse: {} at {}", parsed.error->message,
                                            to_string(parsed.error->location)));
  }
  const auto index = source::build_module_index(*parsed.module);
  auto search = KnobFinder(index, collect_bindings(*parsed.module)).run(source, *parsed.module);
  add_program_order_knobs(source, index, search);
  return search;
}

namespace {

// The text a knob's literal becomes: the value; for autotune configs the list kept or one config; for a
// program order the kernel's body with the reordering.
std::string replacement(const Knob& knob, long long value) {
  if (knob.site == KnobSite::absent) {
    return value == knob.value ? "" : fmt::format(", {}={}", knob.name, value);
  }
  if (knob.site == KnobSite::run_time && value == kRunTimeValue) {
    return knob.literal;
  }
  if (knob.kind == KnobKind::program_order) {
    return program_order_text(knob, value);
  }
  if (knob.kind != KnobKind::autotune_config) {
    return std::to_string(value);
  }
  return value < 0 ? knob.literal : "[" + knob.configs.at(static_cast<std::size_t>(value)) + "]";
}

}  // namespace

std::string rewrite_knobs(std::string_view source, const std::vector<Knob>& knobs,
                          const std::vector<long long>& values) {
  if (knobs.size() != values.size()) {
    throw std::invalid_argument(fmt::format("{} knobs but {} values", knobs.size(), values.size()));
  }
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (byte offset, knob index)
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    const auto& knob = knobs[i];
    if (std::find(knob.choices.begin(), knob.choices.end(), values[i]) == knob.choices.end()) {
      throw std::invalid_argument(fmt::format("{} = {} is not one of its choices; valid values: {}",
                                              knob.name, values[i], fmt::join(knob.choices, " ")));
    }
    const auto offset = byte_offset(source, knob.location);
    if (source.substr(offset, knob.literal.size()) != knob.literal) {
      throw std::invalid_argument(fmt::format("{}: expected the literal {} at {}", knob.where, knob.literal,
                                              to_string(knob.location)));
    }
    order.emplace_back(offset, i);
  }
  std::sort(order.begin(), order.end(), std::greater<>());  // from the end, so earlier offsets hold
  for (std::size_t i = 1; i < order.size(); ++i) {
    const auto& earlier = knobs[order[i].second];
    if (order[i].first + earlier.literal.size() > order[i - 1].first) {
      throw std::invalid_argument(
          fmt::format("{} and {} overlap", earlier.where, knobs[order[i - 1].second].where));
    }
  }
  std::string rewritten(source);
  for (const auto& [offset, index] : order) {
    rewritten.replace(offset, knobs[index].literal.size(), replacement(knobs[index], values[index]));
  }
  return rewritten;
}

}  // namespace kforge::optimize
