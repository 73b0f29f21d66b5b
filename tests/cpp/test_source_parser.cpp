#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "source/python_ast.hpp"
#include "source/python_parser.hpp"

namespace kforge::source {
namespace {

std::unique_ptr<Module> parse_ok(std::string_view source) {
  ParseResult result = parse_module(source);
  EXPECT_TRUE(result.ok()) << result.error->message << " at " << result.error->location << "\n" << source;
  return std::move(result.module);
}

SyntaxError parse_error(std::string_view source) {
  const ParseResult result = parse_module(source);
  EXPECT_FALSE(result.ok()) << "expected a syntax error for:\n" << source;
  EXPECT_EQ(result.module, nullptr);
  return result.error.value_or(SyntaxError{});
}

// dump_tree of the expression of a single expression statement.
std::string expr_tree(std::string_view source) {
  const auto module = parse_ok(source);
  if (!module || module->body.size() != 1) {
    return "<not one statement>";
  }
  const auto* statement = node_cast<ExprStmt>(*module->body.front());
  return statement == nullptr ? dump_tree(*module->body.front()) : dump_tree(*statement->value);
}

std::string stmt_tree(std::string_view source) {
  const auto module = parse_ok(source);
  return module && !module->body.empty() ? dump_tree(*module->body.front()) : "<empty>";
}

std::map<NodeKind, int> count_kinds(const Node& root) {
  std::map<NodeKind, int> counts;
  walk(root, [&counts](const Node& node) {
    ++counts[node.kind()];
    return WalkAction::visit_children;
  });
  return counts;
}

// Every node's height is one more than its tallest child: proves the parser sealed every node.
void expect_consistent_heights(const Node& root) {
  walk(root, [](const Node& node) {
    int tallest = 0;
    node.for_each_child([&tallest](const Node& child) { tallest = std::max(tallest, child.height); });
    EXPECT_EQ(node.height, tallest + 1) << to_string(node.kind()) << " at " << node.location;
    return WalkAction::visit_children;
  });
}

TEST(Parser, ArithmeticPrecedence) {
  EXPECT_EQ(expr_tree("a + b * c"), "BinOp[+](Name[a], BinOp[*](Name[b], Name[c]))");
  EXPECT_EQ(expr_tree("a - b - c"), "BinOp[-](BinOp[-](Name[a], Name[b]), Name[c])");
  EXPECT_EQ(expr_tree("a // b % c @ d"), "BinOp[@](BinOp[%](BinOp[//](Name[a], Name[b]), Name[c]), Name[d])");
  EXPECT_EQ(expr_tree("(a + b) * c"), "BinOp[*](BinOp[+](Name[a], Name[b]), Name[c])");
  EXPECT_EQ(expr_tree("-x ** 2"), "UnaryOp[-](BinOp[**](Name[x], Constant[2]))");
  EXPECT_EQ(expr_tree("a ** -b ** c"), "BinOp[**](Name[a], UnaryOp[-](BinOp[**](Name[b], Name[c])))");
  EXPECT_EQ(expr_tree("~a + +b"), "BinOp[+](UnaryOp[~](Name[a]), UnaryOp[+](Name[b]))");
}

TEST(Parser, BitwiseAndShiftPrecedence) {
  EXPECT_EQ(expr_tree("a | b ^ c & d << e + f"),
            "BinOp[|](Name[a], BinOp[^](Name[b], BinOp[&](Name[c], BinOp[<<](Name[d], BinOp[+](Name[e], "
            "Name[f])))))");
  EXPECT_EQ(expr_tree("a >> b >> c"), "BinOp[>>](BinOp[>>](Name[a], Name[b]), Name[c])");
}

TEST(Parser, BooleanAndComparisonPrecedence) {
  EXPECT_EQ(expr_tree("a or b and not c"),
            "BoolOp[or](Name[a], BoolOp[and](Name[b], UnaryOp[not](Name[c])))");
  EXPECT_EQ(expr_tree("not a == b"), "UnaryOp[not](Compare[==](Name[a], Name[b]))");
  EXPECT_EQ(expr_tree("a < b <= c != d"), "Compare[<,<=,!=](Name[a], Name[b], Name[c], Name[d])");
  EXPECT_EQ(expr_tree("a not in b is not c in d"),
            "Compare[not in,is not,in](Name[a], Name[b], Name[c], Name[d])");
  EXPECT_EQ(expr_tree("a | b > c"), "Compare[>](BinOp[|](Name[a], Name[b]), Name[c])");
  EXPECT_EQ(expr_tree("a and b and c or d"), "BoolOp[or](BoolOp[and](Name[a], Name[b], Name[c]), Name[d])");
}

TEST(Parser, ConditionalLambdaAndWalrus) {
  EXPECT_EQ(expr_tree("x if c else y if d else z"),
            "IfExp(Name[x], Name[c], IfExp(Name[y], Name[d], Name[z]))");
  EXPECT_EQ(expr_tree("lambda x, y=1: x + y"),
            "Lambda(arg[x], arg[y](Constant[1]), BinOp[+](Name[x], Name[y]))");
  EXPECT_EQ(expr_tree("lambda: (yield)"), "Lambda(Yield)");
  EXPECT_EQ(expr_tree("(n := len(a)) > 10"),
            "Compare[>](NamedExpr(Name[n], Call(Name[len], Name[a])), Constant[10])");
  EXPECT_EQ(expr_tree("f(lambda *a, k=2, **kw: a)"),
            "Call(Name[f], Lambda(arg[a], arg[k](Constant[2]), arg[kw], Name[a]))");
}

TEST(Parser, PrimariesCallsAndSubscripts) {
  EXPECT_EQ(expr_tree("a.b.c(d)[e]"),
            "Subscript(Call(Attribute[c](Attribute[b](Name[a])), Name[d]), Name[e])");
  EXPECT_EQ(expr_tree("f(a, *args, k=1, **kw)"),
            "Call(Name[f], Name[a], Starred(Name[args]), keyword[k](Constant[1]), keyword(Name[kw]))");
  EXPECT_EQ(expr_tree("x[1:2, ::3, ...]"),
            "Subscript(Name[x], Tuple(Slice(Constant[1], Constant[2]), Slice(Constant[3]), Constant[...]))");
  EXPECT_EQ(expr_tree("x[:]"), "Subscript(Name[x], Slice)");
  EXPECT_EQ(expr_tree("x[a:]"), "Subscript(Name[x], Slice(Name[a]))");
  EXPECT_EQ(expr_tree("x[*idx]"), "Subscript(Name[x], Starred(Name[idx]))");
  EXPECT_EQ(expr_tree("kernel[grid](x, BLOCK=1024)"),
            "Call(Subscript(Name[kernel], Name[grid]), Name[x], keyword[BLOCK](Constant[1024]))");
  EXPECT_EQ(expr_tree("f(x for x in y)"),
            "Call(Name[f], GeneratorExp(Name[x], comprehension(Name[x], Name[y])))");
}

TEST(Parser, DisplaysAndComprehensions) {
  EXPECT_EQ(expr_tree("()"), "Tuple()");
  EXPECT_EQ(expr_tree("(1,)"), "Tuple(Constant[1])");
  EXPECT_EQ(expr_tree("[*a, *b]"), "List(Starred(Name[a]), Starred(Name[b]))");
  EXPECT_EQ(expr_tree("{*a, b}"), "Set(Starred(Name[a]), Name[b])");
  EXPECT_EQ(expr_tree("{}"), "Dict()");
  EXPECT_EQ(expr_tree("{**a, 'b': 1}"), "Dict(Name[a], String[b], Constant[1])");
  EXPECT_EQ(
      expr_tree("{k: v for k, v in d.items()}"),
      "DictComp(Name[k], Name[v], comprehension(Tuple(Name[k], Name[v]), Call(Attribute[items](Name[d]))))");
  EXPECT_EQ(
      expr_tree("[y for x in data if (y := f(x))]"),
      "ListComp(Name[y], comprehension(Name[x], Name[data], NamedExpr(Name[y], Call(Name[f], Name[x]))))");
  EXPECT_EQ(
      expr_tree("[(i, j) for i in range(3) if i for j in range(i) if j if i > j]"),
      "ListComp(Tuple(Name[i], Name[j]), comprehension(Name[i], Call(Name[range], Constant[3]), Name[i]), "
      "comprehension(Name[j], Call(Name[range], Name[i]), Name[j], Compare[>](Name[i], Name[j])))");
  EXPECT_EQ(
      expr_tree("{x for x in [[1, 2], [3]] for x in x}"),
      "SetComp(Name[x], comprehension(Name[x], List(List(Constant[1], Constant[2]), List(Constant[3]))), "
      "comprehension(Name[x], Name[x]))");
}

TEST(Parser, StringsAndFStrings) {
  EXPECT_EQ(expr_tree("'a' \"b\" '''c'''"), "String[abc]");
  EXPECT_EQ(expr_tree(R"('tab\there\x41\u00e9\N{BULLET}\d')"),
            "String[tab\there"
            "A\xC3\xA9\\N{BULLET}\\d]");
  EXPECT_EQ(expr_tree(R"(r'\n')"), "String[\\n]");
  EXPECT_EQ(expr_tree(R"(f"{a + b!r:>{width}}")"),
            "String[f\"{a + b!r:>{width}}\"](BinOp[+](Name[a], Name[b]), Name[width])");
  EXPECT_EQ(expr_tree(R"(f"{f"{x}"}")"), "String[f\"{f\"{x}\"}\"](String[f\"{x}\"](Name[x]))");
  EXPECT_EQ(expr_tree(R"(f"{d["k"]}")"), "String[f\"{d[\"k\"]}\"](Subscript(Name[d], String[k]))");
  const auto module = parse_ok("x = f'ab{ cd + 1 }'\n");
  const auto& value = *node_cast<Assign>(*module->body.front())->value;
  const auto& fstring = *node_cast<StringLiteral>(value);
  ASSERT_EQ(fstring.fstring_values.size(), 1U);
  EXPECT_EQ(fstring.fstring_values.front()->location, (SourceLocation{1, 11}));
  EXPECT_TRUE(fstring.is_fstring);
}

TEST(Parser, StringDecodingAndErrors) {
  EXPECT_EQ(decode_string_literal(R"(b'\x00\xff')"), std::string("\0\xff", 2));
  EXPECT_EQ(decode_string_literal(R"('\101\n')"), "A\n");
  EXPECT_EQ(decode_string_literal("'a\\\nb'"), "ab");
  EXPECT_EQ(parse_error(R"(x = '\x4')").message, "(unicode error) truncated \\xXX escape");
  EXPECT_EQ(parse_error(R"(x = '\u12')").message, "(unicode error) truncated \\uXXXX escape");
  EXPECT_EQ(parse_error(R"(x = '\N')").message, "(unicode error) malformed \\N character escape");
  EXPECT_EQ(parse_error("x = 'a' b'b'").message, "cannot mix bytes and nonbytes literals");
}

TEST(Parser, StatementLocations) {
  const auto module = parse_ok("import x\n\n@decorator\ndef f(a):\n    return foo(a)\n");
  ASSERT_EQ(module->body.size(), 2U);
  const auto& def = *node_cast<FunctionDef>(*module->body[1]);
  EXPECT_EQ(def.location, (SourceLocation{4, 1}));
  EXPECT_EQ(def.decorators.front()->location, (SourceLocation{3, 2}));
  const auto& ret = *node_cast<Return>(*def.body.front());
  EXPECT_EQ(ret.location, (SourceLocation{5, 5}));
  EXPECT_EQ(ret.value->location, (SourceLocation{5, 12}));
  EXPECT_EQ(node_cast<Call>(*ret.value)->args.front()->location, (SourceLocation{5, 16}));
}

TEST(Parser, FunctionParameters) {
  const auto module = parse_ok(
      "def f(a, b: int = 1, /, c=2, *args: int, d, e: 'str' = 'x', **kw: dict[str, int]) -> tuple[int, "
      "...]:\n"
      "    pass\n");
  const auto& def = *node_cast<FunctionDef>(*module->body.front());
  std::vector<std::pair<std::string, ParameterKind>> params;
  for (const auto& param : def.params) {
    params.emplace_back(param->name, param->parameter_kind);
  }
  EXPECT_EQ(params, (std::vector<std::pair<std::string, ParameterKind>>{
                        {"a", ParameterKind::positional_only},
                        {"b", ParameterKind::positional_only},
                        {"c", ParameterKind::positional_or_keyword},
                        {"args", ParameterKind::var_positional},
                        {"d", ParameterKind::keyword_only},
                        {"e", ParameterKind::keyword_only},
                        {"kw", ParameterKind::var_keyword},
                    }));
  EXPECT_NE(def.params[1]->annotation, nullptr);
  EXPECT_NE(def.params[1]->default_value, nullptr);
  EXPECT_NE(def.returns, nullptr);
  EXPECT_EQ(dump_tree(*def.returns), "Subscript(Name[tuple], Tuple(Name[int], Constant[...]))");
}

TEST(Parser, ClassDefinitions) {
  EXPECT_EQ(stmt_tree("class A(B, metaclass=M, *extra, **options):\n    x: int = 0\n"),
            "ClassDef[A](Name[B], Starred(Name[extra]), keyword[metaclass](Name[M]), keyword(Name[options]), "
            "AnnAssign(Name[x], Name[int], Constant[0]))");
  EXPECT_EQ(stmt_tree("class A[T: int, *Ts, **P]: pass\n"),
            "ClassDef[A](TypeParam[T](Name[int]), TypeParam[Ts], TypeParam[P], Pass)");
}

TEST(Parser, EveryStatementKind) {
  constexpr std::string_view kProgram = R"PY(
import os, a.b.c as d
from . import sibling
from ..pkg.mod import (name as alias, other,)
from mod import *
x = y = 1
x += 2
x: int = 3
del x, y[0], z.w
assert x, "message"
pass; x = 1;
global g
type Alias[T] = list[T]

def outer():
    v = 1
    def inner():
        nonlocal v
        v **= 2
    return inner

async def coroutine(items):
    async with open(a) as f, lock:
        pass
    async for item in items:
        await item
    return [i async for i in items]

def generator():
    received = yield 1
    yield from range(3)
    x = (yield)

for i, *rest in pairs:
    if i:
        continue
    elif rest:
        break
    else:
        pass
else:
    pass

while cond():
    break
else:
    pass

try:
    risky()
except (ValueError, TypeError) as error:
    raise RuntimeError("bad") from error
except Exception:
    raise
else:
    ok()
finally:
    cleanup()

try:
    pass
except* OSError:
    pass

with (open(a) as f, open(b) as g,):
    pass
with (a, b):
    pass
with (yield_ctx()) as v:
    pass

match command.split():
    case [action]:
        pass
    case ["go", direction] | ["move", direction]:
        pass
    case Point(x=0, y=0) as origin if origin:
        pass
    case {"key": value, **rest}:
        pass
    case [1, -2, 3.5, 1 + 2j, "s", None, True, *others]:
        pass
    case Color.RED | (0 | 1):
        pass
    case _:
        pass
)PY";
  const auto module = parse_ok(kProgram);
  ASSERT_NE(module, nullptr);
  const std::map<NodeKind, int> counts = count_kinds(*module);
  for (const NodeKind kind :
       {NodeKind::import_stmt,    NodeKind::import_from,   NodeKind::assign,      NodeKind::aug_assign,
        NodeKind::ann_assign,     NodeKind::delete_stmt,   NodeKind::assert_stmt, NodeKind::pass_stmt,
        NodeKind::global_stmt,    NodeKind::nonlocal_stmt, NodeKind::type_alias,  NodeKind::function_def,
        NodeKind::return_stmt,    NodeKind::with_stmt,     NodeKind::for_stmt,    NodeKind::await_expr,
        NodeKind::list_comp,      NodeKind::yield_expr,    NodeKind::yield_from,  NodeKind::if_stmt,
        NodeKind::continue_stmt,  NodeKind::break_stmt,    NodeKind::while_stmt,  NodeKind::try_stmt,
        NodeKind::except_handler, NodeKind::raise_stmt,    NodeKind::match_stmt,  NodeKind::match_case,
        NodeKind::match_as,       NodeKind::with_item,     NodeKind::alias}) {
    EXPECT_GT(counts.count(kind), 0U) << "missing " << to_string(kind);
  }
  EXPECT_EQ(counts.at(NodeKind::match_case), 7);
  EXPECT_EQ(counts.at(NodeKind::try_stmt), 2);
  expect_consistent_heights(*module);
}

TEST(Parser, ImportDetails) {
  EXPECT_EQ(stmt_tree("from ..pkg.mod import (a as b, c,)\n"),
            "ImportFrom[..pkg.mod](alias[a as b], alias[c])");
  EXPECT_EQ(stmt_tree("from . import x\n"), "ImportFrom[.](alias[x])");
  EXPECT_EQ(stmt_tree("from ... import x\n"), "ImportFrom[...](alias[x])");
  EXPECT_EQ(stmt_tree("import triton.language as tl, os\n"),
            "Import(alias[triton.language as tl], alias[os])");
}

TEST(Parser, AsyncAndTryStar) {
  EXPECT_EQ(stmt_tree("async def f():\n    await g()\n"), "FunctionDef[async f](Expr(Await(Call(Name[g]))))");
  EXPECT_EQ(stmt_tree("try:\n    pass\nexcept* E:\n    pass\n"),
            "Try[*](Pass, ExceptHandler(Name[E], Pass))");
}

TEST(Parser, ElifChainsNest) {
  EXPECT_EQ(stmt_tree("if a:\n    x\nelif b:\n    y\nelse:\n    z\n"),
            "If(Name[a], Expr(Name[x]), If(Name[b], Expr(Name[y]), Expr(Name[z])))");
}

TEST(Parser, MatchIsASoftKeyword) {
  EXPECT_EQ(stmt_tree("match = re.match(p, s)\n"),
            "Assign(Name[match], Call(Attribute[match](Name[re]), Name[p], Name[s]))");
  EXPECT_EQ(stmt_tree("match(x)\n"), "Expr(Call(Name[match], Name[x]))");
  EXPECT_EQ(stmt_tree("print(match.group(1))\n"),
            "Expr(Call(Name[print], Call(Attribute[group](Name[match]), Constant[1])))");
  EXPECT_EQ(stmt_tree("case = type = _ = 1\n"), "Assign(Name[case], Name[type], Name[_], Constant[1])");
  EXPECT_EQ(stmt_tree("match x:\n    case 1:\n        pass\n"),
            "Match(Name[x], match_case(Constant[1], Pass))");
}

TEST(Parser, OddButValidPython) {
  for (const std::string_view source : {
           "@buttons[0].clicked.connect\ndef f(): pass\n",
           "@(lambda fn: fn)\ndef g(): pass\n",
           "@x if y else z\ndef h(): pass\n",
           "@torch.no_grad()\ndef k(): pass\n",
           "f = lambda x=1, *a, k=2, **kw: (x, a, k, kw)\n",
           "first, *rest = items\n",
           "[a, b], (c, d) = x\n",
           "print(*a, *b, sep='')\n",
           "def f():\n    return *a, b\n",
           "x = *a, *b\n",
           "for x in *a, *b: pass\n",
           "a = 1; b = 2;\n",
           "if 0 < x < 10 != y: pass\n",
           "x: list[int] = []\ny: 'Forward'\n",
           "def f[T](x: T) -> T: return x\n",
           "def f(a, /): pass\n",
           "def f(*, a=1, b): pass\n",
           "def f(*args: *Ts): pass\n",
           "def f(a,): pass\nlambda a,: a\n",
           "print(f'{x!r:>{width}.{prec}}')\n",
           "a[...] = b[::2]\n",
           "x = 1 if y else 2\n",
           "x = [\n    1,\n    2,\n]\n",
           "if x:\n\tif y:\n\t\tpass\n",
           "x = 1\r\nif x:\r\n    y = 2\r\n",
           "x = 1",
           "",
           "# just a comment",
           "\n\n\n",
           "πρόβλημα = 1\nnaïve = πρόβλημα + 1\n",
           "class A: x = 1; y = 2\n",
           "while True: break\n",
           "with a as (b, c): pass\n",
           "del (a), [b]\n",
           "x = yield_ = 1\n",
           "print((yield))\n" /* valid at module level for the parser, as in CPython's ast */,
           "assert (x, y)\n",
           "raise\n",
           "nonsense = not not x\n",
           "t = 1,\n",
           "x = (  # comment inside brackets\n    1\n)\n",
           "s = '''\ncontinued ''' 'implicit' \\\n    'concatenation'\n",
           "def f(): ...\n",
           "x = a if b else lambda: c\n",
           "x = [i for i in range(3)][0]\n",
           "print(*[1], **{'sep': ''})\n",
           "f(a)(b)(c)\n",
           "x = -1 ** -2\n",
           "x = a @ b @ c\n",
           "async def f(): return [x async for x in y if await x]\n",
           "type X = int\n",
           "x = 1if y else 2\n",
       }) {
    const ParseResult result = parse_module(source);
    EXPECT_TRUE(result.ok()) << source << "\n-> " << result.error->message << " at "
                             << result.error->location;
  }
}

TEST(Parser, EmptyModule) {
  const auto module = parse_ok("");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->body.empty());
  EXPECT_EQ(module->location, (SourceLocation{1, 1}));
}

TEST(Parser, CommentsAreReturned) {
  const ParseResult result = parse_module("x = 1  # one\n# two\n");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.comments.size(), 2U);
  EXPECT_EQ(result.comments[1].location, (SourceLocation{2, 1}));
}

TEST(Parser, SyntaxErrorsWithLocations) {
  struct Case {
    std::string_view source;
    std::string_view message;
    SourceLocation location;
  };
  for (const Case& c : std::vector<Case>{
           {"if x\n    pass\n", "expected ':'", {1, 5}},
           {"if x:\npass\n", "expected an indented block after 'if' statement on line 1", {2, 1}},
           {"def f():\n", "expected an indented block after function definition on line 1", {2, 1}},
           {"  x = 1\n", "unexpected indent", {1, 3}},
           {"x = 1\n    y = 2\n", "unexpected indent", {2, 5}},
           {"print 'hello'\n", "invalid syntax", {1, 7}},
           {"1 = x\n", "cannot assign to literal", {1, 1}},
           {"f() = 1\n", "cannot assign to function call", {1, 1}},
           {"a + 1 += 1\n", "'BinOp' is an illegal expression for augmented assignment", {1, 1}},
           {"a, b: int\n", "only single target (not tuple) can be annotated", {1, 1}},
           {"for f() in x: pass\n", "cannot assign to function call", {1, 5}},
           {"f(a=1, b)\n", "positional argument follows keyword argument", {1, 8}},
           {"f(**a, b)\n", "positional argument follows keyword argument unpacking", {1, 8}},
           {"f(**a, *b)\n", "iterable argument unpacking follows keyword argument unpacking", {1, 8}},
           {"f(x for x in y, 1)\n", "Generator expression must be parenthesized", {1, 3}},
           {"def f(a=1, b): pass\n", "parameter without a default follows parameter with a default", {1, 12}},
           {"def f(*): pass\n", "named arguments must follow bare *", {1, 7}},
           {"def f(**kw, a): pass\n", "arguments cannot follow var-keyword argument", {1, 13}},
           {"def f(/, a): pass\n", "at least one argument must precede /", {1, 7}},
           {"try:\n    pass\nx = 1\n", "expected 'except' or 'finally' block", {3, 1}},
           {"x = (1,\n", "'(' was never closed", {1, 5}},
           {"x = 'abc\n", "unterminated string literal (detected at line 1)", {1, 5}},
           {"@decorator\nx = 1\n", "expected a function or class definition after decorators", {2, 1}},
           {"class A(x for x in y): pass\n", "invalid syntax", {1, 11}},
           {"lambda x: (yield x) = 1\n", "cannot assign to lambda", {1, 1}},
           {"x = f(\"{}\".format(a) b)\n", "expected ')'", {1, 22}},
           {"else:\n    pass\n", "invalid syntax", {1, 1}},
           {"try:\n    pass\nexcept A, B:\n    pass\n",
            "multiple exception types must be parenthesized",
            {3, 8}},
           {"f'{a b}'\n", "f-string: expecting '}'", {1, 6}},
       }) {
    const SyntaxError error = parse_error(c.source);
    EXPECT_EQ(error.message, c.message) << c.source;
    EXPECT_EQ(error.location, c.location) << c.source;
  }
}

TEST(Parser, NestingLimits) {
  const std::string parens = std::string(150, '(') + "x" + std::string(150, ')');
  EXPECT_TRUE(parse_module(parens).ok());
  EXPECT_EQ(parse_error(std::string(1000, '[') + std::string(1000, ']')).message,
            "too many nested parentheses");
  EXPECT_EQ(parse_error(std::string(100000, '-') + "x").message, "nesting too deep");
  std::string nots;
  for (int i = 0; i < 1000; ++i) {
    nots += "not ";
  }
  EXPECT_EQ(parse_error(nots + "x").message, "nesting too deep");
  std::string lambdas;
  for (int i = 0; i < 1000; ++i) {
    lambdas += "lambda: ";
  }
  EXPECT_EQ(parse_error(lambdas + "0").message, "nesting too deep");
  std::string powers = "x";
  for (int i = 0; i < 1000; ++i) {
    powers += "**x";
  }
  EXPECT_EQ(parse_error(powers).message, "nesting too deep");
}

TEST(Parser, LongChainsAreBoundedByTreeHeight) {
  std::string sum = "a";
  std::string attributes = "a";
  for (int i = 0; i < 5000; ++i) {
    sum += "+a";
    attributes += ".b";
  }
  EXPECT_EQ(parse_error(sum).message, "nesting too deep");
  EXPECT_EQ(parse_error(attributes).message, "nesting too deep");
  std::string moderate = "a";
  for (int i = 0; i < 500; ++i) {
    moderate += " + a";
  }
  EXPECT_TRUE(parse_module(moderate).ok());
  std::string elifs = "if a:\n    pass\n";
  for (int i = 0; i < 300; ++i) {
    elifs += "elif a:\n    pass\n";
  }
  const auto module = parse_ok(elifs);
  ASSERT_NE(module, nullptr);
  expect_consistent_heights(*module);
}

TEST(Parser, WalkVisitsInSourceOrderAndCanSkip) {
  const auto module = parse_ok("def f(a=g()):\n    return h()\nx = k()\n");
  std::vector<std::string> called;
  walk(*module, [&called](const Node& node) {
    if (const auto* call = node_cast<Call>(node)) {
      called.push_back(dotted_name(*call->func));
    }
    return WalkAction::visit_children;
  });
  EXPECT_EQ(called, (std::vector<std::string>{"g", "h", "k"}));
  std::vector<std::string> outside_functions;
  walk(*module, [&outside_functions](const Node& node) {
    if (node.kind() == NodeKind::function_def) {
      return WalkAction::skip_children;
    }
    if (const auto* call = node_cast<Call>(node)) {
      outside_functions.push_back(dotted_name(*call->func));
    }
    return WalkAction::visit_children;
  });
  EXPECT_EQ(outside_functions, (std::vector<std::string>{"k"}));
}

TEST(Parser, DottedNameAndNodeCast) {
  const auto module = parse_ok("triton.language.jit\nf().x\n");
  const auto& first = *node_cast<ExprStmt>(*module->body[0])->value;
  const auto& second = *node_cast<ExprStmt>(*module->body[1])->value;
  EXPECT_EQ(dotted_name(first), "triton.language.jit");
  EXPECT_EQ(dotted_name(second), "");
  EXPECT_NE(node_cast<Attribute>(first), nullptr);
  EXPECT_EQ(node_cast<Name>(first), nullptr);
  EXPECT_EQ(children_of(first).size(), 1U);
}

TEST(Parser, NodeKindNamesAreDistinct) {
  std::vector<std::string_view> names;
  for (int kind = 0; kind <= static_cast<int>(NodeKind::alias); ++kind) {
    const std::string_view name = to_string(static_cast<NodeKind>(kind));
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 0) << name;
    names.push_back(name);
  }
  EXPECT_EQ(to_string(NodeKind::function_def), "FunctionDef");
  EXPECT_EQ(to_string(CompareOperator::is_not), "is not");
  EXPECT_EQ(to_string(BinaryOperator::floor_div), "//");
}

// expr_cast tells expressions from statements and parts by kind alone; it must agree with the
// class hierarchy for every kind a module can hold.
TEST(Parser, ExprCastAgreesWithTheClassHierarchy) {
  const auto module = parse_ok(
      "import os as o\n"
      "from m import (a as b)\n"
      "@deco(x, *y, k=1, **z)\n"
      "async def f[T](p: int = 1, /, *args, q, **kw) -> T:\n"
      "    global g\n"
      "    async with a as (b, c), d:\n"
      "        async for i in range(3):\n"
      "            yield i\n"
      "    try:\n"
      "        del x[1:2:3], y.z\n"
      "    except* ValueError as e:\n"
      "        raise RuntimeError() from e\n"
      "    else:\n"
      "        pass\n"
      "    finally:\n"
      "        assert not a, f'{b!r:>{w}}'\n"
      "    match p:\n"
      "        case [1, *rest] | {'k': v, **kw} if v:\n"
      "            return (yield from g), await h, lambda u=1: u\n"
      "        case Point(x=0) as pt:\n"
      "            nonlocal_q = [e for e in s if e] + list({e: 1 for e in s}) + [*{e for e in s}]\n"
      "    while (n := n - 1) > 0 and -n < 2 or n is None:\n"
      "        break\n"
      "    else:\n"
      "        continue_ = 1 if a else 2\n"
      "    x += 1; y: int = 2; type Alias = list[int]\n"
      "class C(B, metaclass=M):\n"
      "    z = (i for i in ()), {1, 2}, {}, b'x', ...\n");
  int expressions = 0;
  int others = 0;
  walk(*module, [&](const Node& node) {
    const bool is_expr = dynamic_cast<const Expr*>(&node) != nullptr;
    EXPECT_EQ(expr_cast(&node) != nullptr, is_expr) << to_string(node.kind());
    EXPECT_EQ(is_expression(node.kind()), is_expr) << to_string(node.kind());
    if (is_expr) {
      EXPECT_EQ(&as_expr(node), expr_cast(&node));
      ++expressions;
    } else {
      EXPECT_THROW(static_cast<void>(as_expr(node)), std::bad_cast);
      ++others;
    }
    return WalkAction::visit_children;
  });
  EXPECT_GT(expressions, 100);
  EXPECT_GT(others, 40);
  EXPECT_EQ(expr_cast(nullptr), nullptr);
}

}  // namespace
}  // namespace kforge::source
