#include "optimize/autotune_configs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>

#include "source/offset_cursor.hpp"
#include "source/python_tokenizer.hpp"

namespace kforge::optimize {
namespace {

using source::node_cast;

// The decorator call `triton.autotune(configs=..., key=...)` of a kernel, if any.
const source::Call* autotune_call(const source::FunctionDef& definition) {
  for (const auto& decorator : definition.decorators) {
    const auto* call = node_cast<source::Call>(decorator.get());
    if (call != nullptr && source::dotted_name(*call->func).ends_with("autotune")) {
      return call;
    }
  }
  return nullptr;
}

// The configs argument of the decorator: `configs=` or the first positional one.
const source::Expr* configs_argument(const source::Call& call) {
  for (const auto& keyword : call.keywords) {
    if (keyword->name == "configs") {
      return keyword->value.get();
    }
  }
  return call.args.empty() ? nullptr : call.args.front().get();
}

// The module-level list a name is bound to, when it is bound exactly once.
const source::List* module_list(const source::Module& module, const std::string& name, std::string& where) {
  const source::List* found = nullptr;
  int assignments = 0;
  for (const auto& statement : module.body) {
    const auto* assign = node_cast<source::Assign>(statement.get());
    if (assign == nullptr) {
      continue;
    }
    for (const auto& target : assign->targets) {
      if (const auto* bound = node_cast<source::Name>(target.get()); bound != nullptr && bound->id == name) {
        ++assignments;
        found = node_cast<source::List>(assign->value.get());
        where = fmt::format("module constant {} at {}", name, to_string(assign->location));
      }
    }
  }
  return assignments == 1 ? found : nullptr;
}

// The texts of the list opening at token `open` and of its top-level elements; nullopt when the
// brackets do not close.
std::optional<std::pair<std::string, std::vector<std::string>>> list_texts(
    std::string_view text, const std::vector<source::Token>& tokens, std::size_t open) {
  std::vector<std::string> elements;
  source::OffsetCursor cursor(text);  // the tokens come from `text`, so every location is in it
  const auto list_begin = cursor.offset_of(tokens[open].location).value();
  int depth = 0;
  std::optional<std::size_t> element_start;
  std::size_t element_end = 0;
  for (std::size_t i = open; i < tokens.size(); ++i) {
    const auto& token = tokens[i];
    if (source::is_opening_bracket(token)) {
      ++depth;
      if (depth == 1) {
        continue;
      }
    } else if (source::is_closing_bracket(token)) {
      --depth;
    }
    if (depth == 0 || (depth == 1 && token.is_op(","))) {
      if (element_start) {
        elements.emplace_back(text.substr(*element_start, element_end - *element_start));
        element_start.reset();
      }
      if (depth == 0) {
        const auto end = cursor.offset_of(token.end).value();
        return std::make_pair(std::string(text.substr(list_begin, end - list_begin)), std::move(elements));
      }
      continue;
    }
    if (token.kind == source::TokenKind::newline || token.kind == source::TokenKind::indent ||
        token.kind == source::TokenKind::dedent) {
      continue;
    }
    if (!element_start) {
      element_start = cursor.offset_of(token.location).value();
    }
    element_end = cursor.offset_of(token.end).value();
  }
  return std::nullopt;
}

}  // namespace

std::vector<AutotuneConfigList> find_autotune_configs(std::string_view source, const source::Module& module,
                                                      const source::ModuleIndex& index,
                                                      std::vector<std::string>& fixed) {
  std::vector<AutotuneConfigList> lists;
  std::optional<source::TokenizeResult> tokens;
  for (const auto& kernel : index.kernels) {
    const auto* call =
        kernel.autotuned && kernel.definition != nullptr ? autotune_call(*kernel.definition) : nullptr;
    const auto* argument = call != nullptr ? configs_argument(*call) : nullptr;
    if (argument == nullptr) {
      continue;
    }
    std::string where =
        fmt::format("autotune configs of {} at {}", kernel.name, to_string(argument->location));
    const auto* list = node_cast<source::List>(argument);
    if (const auto* name = node_cast<source::Name>(argument)) {
      list = module_list(module, name->id, where);
    }
    const bool plain =
        list != nullptr && !list->elements.empty() &&
        std::all_of(list->elements.begin(), list->elements.end(), [](const source::ExprPtr& element) {
          return node_cast<source::Call>(element.get()) != nullptr;
        });
    if (!plain) {
      fixed.push_back(
          fmt::format("the autotune configs of {}: not a list of triton.Config calls written in "
                      "the source (built at run time, or bound more than once)",
                      kernel.name));
      continue;
    }
    if (!tokens) {
      tokens = source::tokenize(source);
    }
    const auto open = std::find_if(
        tokens->tokens.begin(), tokens->tokens.end(),
        [&](const source::Token& token) { return token.location == list->location && token.is_op("["); });
    const auto texts =
        open == tokens->tokens.end()
            ? std::nullopt
            : list_texts(source, tokens->tokens, static_cast<std::size_t>(open - tokens->tokens.begin()));
    if (!texts || texts->second.size() != list->elements.size()) {
      fixed.push_back(
          fmt::format("the autotune configs of {}: their source text could not be delimited", kernel.name));
      continue;
    }
    lists.push_back({kernel.name, std::move(where), list->location, texts->first, texts->second, list});
  }
  return lists;
}

}  // namespace kforge::optimize
