#include "optimize/program_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include "source/offset_cursor.hpp"
#include "source/python_ast.hpp"

namespace kforge::optimize {
namespace {

using source::node_cast;

// The prefix every reordered name starts with: a kernel that has one was already rewritten.
constexpr std::string_view kPrefix = "_kf_";

std::optional<int> literal_axis(const source::Expr* expr) {
  const auto* constant = node_cast<source::Constant>(expr);
  if (constant == nullptr || constant->constant_kind != source::ConstantKind::number) {
    return std::nullopt;
  }
  if (constant->text == "0" || constant->text == "1" || constant->text == "2") {
    return constant->text.front() - '0';
  }
  return std::nullopt;
}

// The axis a program_id call asks for, or nullopt when it is not a literal 0, 1 or 2.
std::optional<int> axis_of(const source::Call& call) {
  if (call.args.size() == 1 && call.keywords.empty()) {
    return literal_axis(call.args.front().get());
  }
  if (call.args.empty() && call.keywords.size() == 1 && call.keywords.front()->name == "axis") {
    return literal_axis(call.keywords.front()->value.get());
  }
  return std::nullopt;
}

struct FoundCall {
  const source::Call* call = nullptr;
  std::string language;
  int axis = 0;
};

// The kernel's program_id calls, or the reason they cannot be rewritten.
struct KernelScan {
  std::vector<FoundCall> calls;
  std::optional<std::string> refusal;
  bool reordered = false;
};

KernelScan scan_kernel(const source::FunctionDef& kernel) {
  KernelScan scan;
  for (const auto& statement : kernel.body) {
    source::walk(*statement, [&](const source::Node& node) {
      if (const auto* name = node_cast<source::Name>(&node);
          name != nullptr && name->id.starts_with(kPrefix)) {
        scan.reordered = true;
      }
      const auto* call = node_cast<source::Call>(&node);
      const auto function = call != nullptr ? source::dotted_name(*call->func) : std::string();
      if (!function.ends_with(".program_id")) {
        return source::WalkAction::visit_children;
      }
      const auto axis = axis_of(*call);
      if (!axis) {
        scan.refusal = "a program_id call whose axis is not a literal 0, 1 or 2";
      } else {
        scan.calls.push_back(FoundCall{call, function.substr(0, function.size() - 11), *axis});
      }
      return source::WalkAction::skip_children;
    });
  }
  return scan;
}

bool uses_axis(const KernelScan& scan, int axis) {
  return std::any_of(scan.calls.begin(), scan.calls.end(),
                     [axis](const FoundCall& found) { return found.axis == axis; });
}

// The first statement of the body that is not its docstring.
const source::Stmt* first_statement(const source::FunctionDef& kernel) {
  std::size_t first = 0;
  if (const auto* expression =
          kernel.body.empty() ? nullptr : node_cast<source::ExprStmt>(kernel.body.front().get());
      expression != nullptr && node_cast<source::StringLiteral>(expression->value.get()) != nullptr) {
    first = 1;
  }
  return first < kernel.body.size() ? kernel.body[first].get() : nullptr;
}

class SiteBuilder {
 public:
  explicit SiteBuilder(std::string_view source) : source_(source) {}

  // The knob for `kernel`, or the reason there is none.
  std::variant<Knob, std::string> build(const std::string& kernel, const source::FunctionDef& definition,
                                        const KernelScan& scan) {
    const auto* first = first_statement(definition);
    const auto start = first != nullptr ? offset(first->location) : std::nullopt;
    if (!start) {
      return std::string("the kernel has no statement to put the reordering before");
    }
    const auto line_start = source_.find_last_of("\r\n", *start == 0 ? 0 : *start - 1);
    const auto indent_from = line_start == std::string_view::npos ? 0 : line_start + 1;
    const auto indent = source_.substr(indent_from, *start - indent_from);
    if (indent.empty() || indent.find_first_not_of(" \t") != std::string_view::npos) {
      return std::string("its first statement does not start a line of its own");
    }
    ProgramOrderSite site{scan.calls.front().language, std::string(indent), {}};
    std::size_t end = *start;
    for (const auto& found : scan.calls) {
      if (found.language != site.language) {
        return fmt::format("program_id is called as {0}.program_id and {1}.program_id", site.language,
                           found.language);
      }
      const auto call = offset(found.call->location);
      const auto close = call ? source_.find(')', *call) : std::string_view::npos;
      const auto text = close != std::string_view::npos ? source_.substr(*call, close + 1 - *call) : "";
      if (text.empty() || *call < *start || !text.starts_with(site.language + ".program_id") ||
          text.find_first_of("#\"'", site.language.size()) != std::string_view::npos) {
        return fmt::format("the program_id call at {} is not plain text", to_string(found.call->location));
      }
      if (found.axis < 2) {
        site.calls.push_back(ProgramIdCall{*call - *start, text.size(), found.axis});
        end = std::max(end, close + 1);
      }
    }
    std::sort(site.calls.begin(), site.calls.end(),
              [](const ProgramIdCall& a, const ProgramIdCall& b) { return a.offset < b.offset; });
    Knob knob{"program_order",
              KnobKind::program_order,
              fmt::format("program order of {} at {}", kernel, to_string(first->location)),
              {kernel},
              first->location,
              std::string(source_.substr(*start, end - *start)),
              0,
              {kProgramOrders.begin(), kProgramOrders.end()},
              {},
              std::move(site),
              KnobSite::literal};
    return knob;
  }

 private:
  std::optional<std::size_t> offset(source::SourceLocation location) {
    return source::OffsetCursor(source_).offset_of(location);
  }

  std::string_view source_;
};

}  // namespace

void add_program_order_knobs(std::string_view source, const source::ModuleIndex& index, KnobSearch& search) {
  SiteBuilder builder(source);
  for (const auto& kernel : index.kernels) {
    if (kernel.definition == nullptr) {
      continue;
    }
    const auto scan = scan_kernel(*kernel.definition);
    if (!uses_axis(scan, 0) || !uses_axis(scan, 1)) {
      continue;  // a 1-D grid (or ids it computes itself): nothing to reorder
    }
    std::optional<std::string> refusal = scan.refusal;
    if (scan.reordered) {
      refusal = fmt::format("it already has names starting with {} (reordered by kforge)", kPrefix);
    }
    if (!refusal) {
      auto built = builder.build(kernel.name, *kernel.definition, scan);
      if (auto* knob = std::get_if<Knob>(&built)) {
        search.knobs.push_back(std::move(*knob));
        continue;
      }
      refusal = std::get<std::string>(built);
    }
    search.fixed.push_back(fmt::format("program order of {}: {}", kernel.name, *refusal));
  }
}

std::string program_order_text(const Knob& knob, long long group) {
  if (group <= 0) {
    return knob.literal;
  }
  const auto& site = knob.order;
  const auto& tl = site.language;
  const std::vector<std::string> prologue{
      fmt::format("# kforge program order: groups of {} programs along axis 0 (a permutation of the grid)",
                  group),
      fmt::format("_kf_np0 = {}.num_programs(0)", tl),
      fmt::format("_kf_np1 = {}.num_programs(1)", tl),
      fmt::format("_kf_lin = {0}.program_id(0) + {0}.program_id(1) * _kf_np0", tl),
      fmt::format("_kf_in_group = {} * _kf_np1", group),
      fmt::format("_kf_first = _kf_lin // _kf_in_group * {}", group),
      fmt::format("_kf_rows = {}.minimum(_kf_np0 - _kf_first, {})", tl, group),
      "_kf_pid_0 = _kf_first + _kf_lin % _kf_in_group % _kf_rows",
      "_kf_pid_1 = _kf_lin % _kf_in_group // _kf_rows",
  };
  std::string text;
  for (const auto& line : prologue) {
    text += line + "\n" + site.indent;
  }
  std::size_t copied = 0;
  for (const auto& call : site.calls) {
    text += knob.literal.substr(copied, call.offset - copied);
    text += call.axis == 0 ? "_kf_pid_0" : "_kf_pid_1";
    copied = call.offset + call.length;
  }
  return text + knob.literal.substr(copied);
}

}  // namespace kforge::optimize
