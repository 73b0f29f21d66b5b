#include "rules/rule_fallback_on_kernel_failure.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Bounds the propagation of "launches a kernel" up the call graph.
constexpr int kMaxPropagationRounds = 64;

constexpr std::string_view kFallbackOnKernelFailureWhy =
    ": if the kernel fails (compile error, bad launch, wrong shape) the handler silently runs something "
    "else, and a fallback that passes the checks is not your kernel; let the error propagate (end the "
    "handler with `raise`) or drop the try";

bool always_raises(const source::StmtList& body);

bool always_raises_stmt(const source::Stmt& stmt) {
  switch (stmt.kind()) {
    case source::NodeKind::raise_stmt:
      return true;
    case source::NodeKind::if_stmt: {
      const auto& branch = *source::node_cast<source::If>(stmt);
      return !branch.orelse.empty() && always_raises(branch.body) && always_raises(branch.orelse);
    }
    case source::NodeKind::with_stmt:
      return always_raises(source::node_cast<source::With>(stmt)->body);
    case source::NodeKind::try_stmt: {
      const auto& attempt = *source::node_cast<source::Try>(stmt);
      if (!attempt.finalbody.empty() && always_raises(attempt.finalbody)) {
        return true;
      }
      const bool handlers_raise =
          std::all_of(attempt.handlers.begin(), attempt.handlers.end(),
                      [](const auto& handler) { return always_raises(handler->body); });
      return handlers_raise && (always_raises(attempt.body) || always_raises(attempt.orelse));
    }
    case source::NodeKind::assert_stmt: {
      const auto* test =
          source::node_cast<source::Constant>(source::node_cast<source::Assert>(stmt)->test.get());
      return test != nullptr && (test->constant_kind == source::ConstantKind::false_ ||
                                 test->constant_kind == source::ConstantKind::none || test->text == "0");
    }
    default:
      return false;
  }
}

// Whether `stmt` may leave the handler normally: a return anywhere in it, or a break/continue
// that is not inside a loop of its own (nested functions and classes aside).
bool may_leave(const source::Stmt& stmt) {
  bool leaves = false;
  std::vector<std::pair<const source::Node*, bool>> pending{{&stmt, false}};
  while (!pending.empty() && !leaves) {
    const auto [node, in_loop] = pending.back();
    pending.pop_back();
    const source::NodeKind kind = node->kind();
    if (kind == source::NodeKind::function_def || kind == source::NodeKind::lambda ||
        kind == source::NodeKind::class_def) {
      continue;
    }
    leaves = kind == source::NodeKind::return_stmt ||
             (!in_loop && (kind == source::NodeKind::break_stmt || kind == source::NodeKind::continue_stmt));
    const bool loop = kind == source::NodeKind::for_stmt || kind == source::NodeKind::while_stmt;
    for (const source::Node* child : source::children_of(*node)) {
      pending.emplace_back(child, in_loop || loop);
    }
  }
  return leaves;
}

// Every path through `body` ends in a raise (before any return, break or continue).
bool always_raises(const source::StmtList& body) {
  for (const auto& stmt : body) {
    if (always_raises_stmt(*stmt)) {
      return true;
    }
    if (may_leave(*stmt)) {
      return false;
    }
  }
  return false;
}

class FallbackChecker {
 public:
  FallbackChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(FallbackOnKernelFailureRule::kId, findings),
        severity_(severity) {
    for (const source::KernelLaunch& launch : context.index.launches) {
      launch_sites_.insert({launch.location.line, launch.location.column});
    }
    find_launching_functions();
  }

  void run() {
    walk_reachable(context_, names_, [this](const source::Node& node, const FunctionBody& body) {
      if (const auto* attempt = source::node_cast<source::Try>(node)) {
        check_try(*attempt, body);
      } else if (const auto* with = source::node_cast<source::With>(node)) {
        check_suppress(*with, body);
      }
    });
  }

 private:
  // Functions that launch a kernel themselves or call one that does (fixpoint over all functions).
  void find_launching_functions() {
    std::map<std::string, std::vector<std::size_t>, std::less<>> by_name;
    std::vector<std::size_t> functions;
    for (std::size_t scope = 1; scope < names_.scope_count(); ++scope) {
      const ScopeKind kind = names_.scope(scope).kind;
      if (kind == ScopeKind::function || kind == ScopeKind::lambda) {
        by_name[names_.scope(scope).qualified_name].push_back(scope);
        functions.push_back(scope);
      }
    }
    for (const source::KernelLaunch& launch : context_.index.launches) {
      if (const auto found = by_name.find(launch.function); found != by_name.end()) {
        launching_.insert(found->second.begin(), found->second.end());
      }
    }
    std::map<std::size_t, std::vector<std::size_t>> callees;
    for (const std::size_t scope : functions) {
      walk_body(*names_.scope(scope).node, [&](const source::Node& node) {
        if (const auto* call = source::node_cast<source::Call>(node)) {
          const std::vector<std::size_t> called = names_.callees(*call);
          callees[scope].insert(callees[scope].end(), called.begin(), called.end());
        }
      });
    }
    for (int round = 0; round < kMaxPropagationRounds; ++round) {
      bool changed = false;
      for (const auto& [caller, called] : callees) {
        const bool launches = std::any_of(called.begin(), called.end(),
                                          [this](std::size_t callee) { return launching_.contains(callee); });
        if (launches && launching_.insert(caller).second) {
          changed = true;
        }
      }
      if (!changed) {
        break;
      }
    }
  }

  // Whether running `statements` may launch a Triton kernel.
  bool launches(const source::StmtList& statements) const {
    bool found = false;
    for (const auto& statement : statements) {
      if (found) {
        break;
      }
      source::walk(*statement, [&](const source::Node& node) {
        if (found || node.kind() == source::NodeKind::function_def ||
            node.kind() == source::NodeKind::lambda || node.kind() == source::NodeKind::class_def) {
          return source::WalkAction::skip_children;
        }
        if (const auto* call = source::node_cast<source::Call>(node)) {
          const std::vector<std::size_t> called = names_.callees(*call);
          found = launch_sites_.contains({call->location.line, call->location.column}) ||
                  std::any_of(called.begin(), called.end(),
                              [this](std::size_t callee) { return launching_.contains(callee); });
        }
        return source::WalkAction::visit_children;
      });
    }
    return found;
  }

  void check_try(const source::Try& attempt, const FunctionBody& body) {
    if (attempt.handlers.empty() || !launches(attempt.body)) {
      return;
    }
    for (const auto& handler : attempt.handlers) {
      // A handler that launches a Triton kernel itself is a retry (smaller blocks after
      // triton.OutOfResources), not a fallback: the work stays Triton's.
      if (!always_raises(handler->body) && !launches(handler->body)) {
        sink_.add(severity_,
                  "this except handler swallows a failure of the Triton kernel launched in the try at line " +
                      std::to_string(attempt.location.line) + " (in `" + body.qualified_name + "`)" +
                      std::string(kFallbackOnKernelFailureWhy),
                  handler->location);
      }
    }
  }

  void check_suppress(const source::With& with, const FunctionBody& body) {
    for (const auto& item : with.items) {
      const auto* call = source::node_cast<source::Call>(item->context_expr.get());
      if (call != nullptr && names_.resolve(*call->func) == "contextlib.suppress" && launches(with.body)) {
        sink_.add(severity_,
                  "`" + spelling(*call->func) +
                      "(...)` swallows a failure of the Triton kernel launched in its "
                      "block (in `" +
                      body.qualified_name + "`)" + std::string(kFallbackOnKernelFailureWhy),
                  with.location);
        return;
      }
    }
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
  std::set<std::pair<int, int>> launch_sites_;
  std::set<std::size_t> launching_;
};

}  // namespace

std::string_view FallbackOnKernelFailureRule::summary() const {
  return "no try/except around a Triton launch that swallows its failure (handlers must re-raise)";
}

void FallbackOnKernelFailureRule::check(const AnalysisContext& context,
                                        std::vector<Finding>& findings) const {
  FallbackChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
