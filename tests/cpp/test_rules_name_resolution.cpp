#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/name_resolution.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

// Resolves the expression of the `index`-th expression statement (or assignment value) of the
// last function or module body in `source`.
class Resolution {
 public:
  explicit Resolution(std::string_view source) : parsed_(source::parse_module(source)) {
    EXPECT_TRUE(parsed_.ok()) << parsed_.error->message;
    if (parsed_.ok()) {
      names_ = std::make_unique<NameResolver>(*parsed_.module);
      source::walk(*parsed_.module, [this](const source::Node& node) {
        if (const auto* statement = source::node_cast<source::ExprStmt>(node)) {
          probes_.push_back(statement->value.get());
        }
        return source::WalkAction::visit_children;
      });
    }
  }

  // Origin of the `index`-th bare expression statement of the module (in source order).
  std::string origin(std::size_t index = 0) const {
    return index < probes_.size() ? names_->resolve(*probes_[index]) : "<no probe>";
  }
  Resolved resolved(std::size_t index = 0) const { return names_->resolve_with_import(*probes_[index]); }
  const NameResolver& names() const { return *names_; }
  const source::Expr& probe(std::size_t index) const { return *probes_[index]; }

 private:
  source::ParseResult parsed_;
  std::unique_ptr<NameResolver> names_;
  std::vector<const source::Expr*> probes_;
};

TEST(NameResolution, ImportSpellings) {
  EXPECT_EQ(Resolution("import torch.nn.functional as F\nF.softmax\n").origin(),
            "torch.nn.functional.softmax");
  EXPECT_EQ(Resolution("from torch import matmul as mm\nmm\n").origin(), "torch.matmul");
  EXPECT_EQ(Resolution("import torch as T\nT.sum\n").origin(), "torch.sum");
  EXPECT_EQ(Resolution("import torch.nn\ntorch.nn.functional.relu\n").origin(), "torch.nn.functional.relu");
  EXPECT_EQ(Resolution("from torch.nn import functional\nfunctional.gelu\n").origin(),
            "torch.nn.functional.gelu");
  EXPECT_EQ(Resolution("from . import helpers\nhelpers.run\n").origin(), ".helpers.run");
}

TEST(NameResolution, ImportOriginIsKept) {
  const Resolution resolution("import torch.nn.functional as F\nact = F.silu\nact\n");
  EXPECT_EQ(resolution.resolved().origin, "torch.nn.functional.silu");
  EXPECT_EQ(resolution.resolved().import_origin, "torch.nn.functional");
}

TEST(NameResolution, ModuleLevelAliases) {
  EXPECT_EQ(Resolution("import torch\nF = torch.nn.functional\nF.softmax\n").origin(),
            "torch.nn.functional.softmax");
  EXPECT_EQ(Resolution("import torch\nsm = torch.softmax\nalias = sm\nalias\n").origin(), "torch.softmax");
  EXPECT_EQ(Resolution("import torch\nop = getattr(torch, \"exp\")\nop\n").origin(), "torch.exp");
}

TEST(NameResolution, LocalImportsAndShadowing) {
  EXPECT_EQ(Resolution("def f():\n    import torch.nn.functional as F\n    F.relu\n").origin(),
            "torch.nn.functional.relu");
  // A parameter named like a module shadows it.
  EXPECT_EQ(Resolution("import torch\ndef f(torch):\n    torch.relu\n").origin(), "");
  // So does a local assignment of something that is not an alias.
  EXPECT_EQ(Resolution("import torch as F\ndef f(x):\n    F = x\n    F.relu\n").origin(), "");
  // A candidate's own function named like a builtin is not the builtin.
  EXPECT_EQ(Resolution("def open(p):\n    return p\nopen\n").origin(), "");
  EXPECT_EQ(Resolution("open\n").origin(), "builtins.open");
}

TEST(NameResolution, CallsInChainsAndCallResults) {
  EXPECT_EQ(Resolution("import torch\ntorch.cuda.current_stream().wait_stream\n").origin(),
            "torch.cuda.current_stream().wait_stream");
  EXPECT_EQ(Resolution("import torch\ndef f(x):\n    out = torch.empty_like(x)\n    out.sum\n").origin(),
            "torch.empty_like().sum");
}

TEST(NameResolution, SelfAttributesSetInInit) {
  const Resolution resolution(R"PY(import torch.nn.functional as F
class M:
    act_default = F.relu

    def __init__(self):
        self.act = F.gelu

    def forward(self, x):
        self.act
        self.act_default
        getattr(self, "act")
)PY");
  EXPECT_EQ(resolution.origin(0), "torch.nn.functional.gelu");
  EXPECT_EQ(resolution.origin(1), "torch.nn.functional.relu");
  EXPECT_EQ(resolution.origin(2), "torch.nn.functional.gelu");
}

TEST(NameResolution, StarImportsAndBuiltinsModule) {
  EXPECT_EQ(Resolution("from torch import *\nsoftmax\n").origin(), "torch.softmax");
  // After `from torch import *`, max is torch.max.
  EXPECT_EQ(Resolution("from torch import *\nmax\n").origin(), "torch.max");
  EXPECT_EQ(Resolution("__builtins__.eval\n").origin(), "builtins.eval");
}

TEST(NameResolution, ConditionalAliasesTryBothBranches) {
  EXPECT_EQ(Resolution("import torch\nfn = None if True else torch.exp\nfn\n").origin(), "torch.exp");
}

TEST(NameResolution, AliasCyclesTerminate) {
  EXPECT_EQ(Resolution("a = b\nb = a\na\n").origin(), "");
  std::string chain = "import torch\nv0 = torch.exp\n";
  for (int i = 1; i < 400; ++i) {
    chain += "v" + std::to_string(i) + " = v" + std::to_string(i - 1) + " if c else v" +
             std::to_string(i - 1) + "\n";
  }
  chain += "v399\n";
  EXPECT_NO_THROW(static_cast<void>(Resolution(chain).origin()));
}

TEST(NameResolution, ValuesOfSelfAttributesAndLoopTargets) {
  const Resolution resolution(R"PY(import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2)])

    def forward(self, x):
        for layer in self.layers:
            layer
)PY");
  const std::vector<const source::Expr*> values =
      resolution.names().values_of(resolution.probe(1));  // 0 is super().__init__()
  ASSERT_GE(values.size(), 2U);
  EXPECT_EQ(source::dotted_name(*values[0]), "self.layers");
  EXPECT_EQ(values[1]->kind(), source::NodeKind::call);
}

TEST(NameResolution, QualifiedNamesMatchTheModuleIndex) {
  const source::ParseResult parsed = source::parse_module(R"PY(
class M:
    def forward(self):
        def inner():
            return lambda: 1
        return inner
)PY");
  ASSERT_TRUE(parsed.ok());
  const NameResolver names(*parsed.module);
  std::vector<std::string> qualified;
  for (std::size_t i = 1; i < names.scope_count(); ++i) {
    qualified.push_back(names.scope(i).qualified_name);
  }
  EXPECT_EQ(qualified, (std::vector<std::string>{"M", "M.forward", "M.forward.<locals>.inner",
                                                 "M.forward.<locals>.inner.<locals>.<lambda>"}));
}

TEST(NameResolution, OriginHelpers) {
  EXPECT_TRUE(in_module("torch.nn.functional.softmax", "torch.nn"));
  EXPECT_FALSE(in_module("torch.nn.functional.softmax", "torch.n"));
  EXPECT_TRUE(in_module("torch", "torch"));
  EXPECT_TRUE(is_static_origin("torch.softmax"));
  EXPECT_FALSE(is_static_origin("torch.empty().sum"));
  EXPECT_FALSE(is_static_origin(""));
  EXPECT_EQ(last_component("torch.nn.functional.softmax"), "softmax");
}

}  // namespace
}  // namespace kforge::rules
