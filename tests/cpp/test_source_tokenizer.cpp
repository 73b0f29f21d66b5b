#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "source/python_tokenizer.hpp"

namespace kforge::source {
namespace {

// "KIND:text" per token (text omitted for NEWLINE/INDENT/DEDENT/ENDMARKER).
std::vector<std::string> describe(std::string_view source) {
  const TokenizeResult result = tokenize(source);
  EXPECT_TRUE(result.ok()) << result.error->message << " at " << to_string(result.error->location);
  std::vector<std::string> tokens;
  for (const Token& token : result.tokens) {
    const bool has_text = token.kind != TokenKind::newline && token.kind != TokenKind::indent &&
                          token.kind != TokenKind::dedent && token.kind != TokenKind::end_of_input;
    tokens.push_back(std::string(to_string(token.kind)) + (has_text ? ":" + token.text : ""));
  }
  return tokens;
}

std::vector<Token> tokens_of(std::string_view source) {
  TokenizeResult result = tokenize(source);
  EXPECT_TRUE(result.ok()) << result.error->message << " at " << to_string(result.error->location);
  return std::move(result.tokens);
}

TokenizeError error_of(std::string_view source) {
  const TokenizeResult result = tokenize(source);
  EXPECT_FALSE(result.ok()) << "expected a tokenize error for: " << source;
  return result.error.value_or(TokenizeError{});
}

// The single token a literal should lex to, followed by NEWLINE and ENDMARKER.
void expect_single_token(std::string_view source, TokenKind kind) {
  const std::vector<Token> tokens = tokens_of(source);
  ASSERT_EQ(tokens.size(), 3U) << source;
  EXPECT_EQ(tokens[0].kind, kind) << source;
  EXPECT_EQ(tokens[0].text, source);
}

using Tokens = std::vector<std::string>;

TEST(Tokenizer, SimpleStatementWithLocations) {
  const std::vector<Token> tokens = tokens_of("x = foo(1)\n");
  ASSERT_EQ(tokens.size(), 8U);
  EXPECT_EQ(tokens[0].text, "x");
  EXPECT_EQ(tokens[0].location, (SourceLocation{1, 1}));
  EXPECT_EQ(tokens[2].text, "foo");
  EXPECT_EQ(tokens[2].location, (SourceLocation{1, 5}));
  EXPECT_EQ(tokens[2].end, (SourceLocation{1, 8}));
  EXPECT_EQ(tokens[6].kind, TokenKind::newline);
  EXPECT_EQ(tokens[7].kind, TokenKind::end_of_input);
}

TEST(Tokenizer, KeywordsAndSoftKeywords) {
  EXPECT_EQ(describe("if match is not None: pass\n"),
            (Tokens{"KEYWORD:if", "NAME:match", "KEYWORD:is", "KEYWORD:not", "KEYWORD:None",
                    "OP::", "KEYWORD:pass", "NEWLINE", "ENDMARKER"}));
  EXPECT_TRUE(is_python_keyword("lambda"));
  EXPECT_FALSE(is_python_keyword("match"));
  EXPECT_FALSE(is_python_keyword("type"));
}

TEST(Tokenizer, IndentAndDedent) {
  EXPECT_EQ(describe("if a:\n    b\n    if c:\n        d\ne\n"),
            (Tokens{"KEYWORD:if", "NAME:a", "OP::", "NEWLINE", "INDENT", "NAME:b", "NEWLINE", "KEYWORD:if",
                    "NAME:c", "OP::", "NEWLINE", "INDENT", "NAME:d", "NEWLINE", "DEDENT", "DEDENT", "NAME:e",
                    "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, DedentsAtEndOfFile) {
  EXPECT_EQ(describe("def f():\n  if x:\n    return 1"),
            (Tokens{"KEYWORD:def", "NAME:f", "OP:(", "OP:)", "OP::", "NEWLINE", "INDENT", "KEYWORD:if",
                    "NAME:x", "OP::", "NEWLINE", "INDENT", "KEYWORD:return", "NUMBER:1", "NEWLINE", "DEDENT",
                    "DEDENT", "ENDMARKER"}));
}

TEST(Tokenizer, BlankAndCommentLinesDoNotAffectIndentation) {
  const TokenizeResult result = tokenize("if a:\n\n    # note\n      \n    b  # trailing\n");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.comments.size(), 2U);
  EXPECT_EQ(result.comments[0].text, "# note");
  EXPECT_EQ(result.comments[0].location, (SourceLocation{3, 5}));
  EXPECT_EQ(result.comments[1].text, "# trailing");
  EXPECT_EQ(describe("if a:\n\n    # note\n      \n    b  # trailing\n"),
            (Tokens{"KEYWORD:if", "NAME:a", "OP::", "NEWLINE", "INDENT", "NAME:b", "NEWLINE", "DEDENT",
                    "ENDMARKER"}));
}

TEST(Tokenizer, ImplicitLineJoiningInsideBrackets) {
  EXPECT_EQ(describe("x = (1,\n  2,  # two\n\n  [3,\n4])\n"),
            (Tokens{"NAME:x", "OP:=", "OP:(", "NUMBER:1", "OP:,", "NUMBER:2", "OP:,", "OP:[", "NUMBER:3",
                    "OP:,", "NUMBER:4", "OP:]", "OP:)", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, BackslashContinuation) {
  const std::vector<Token> tokens = tokens_of("x = 1 + \\\n        2\ny\n");
  ASSERT_EQ(tokens.size(), 9U);
  EXPECT_EQ(tokens[4].text, "2");
  EXPECT_EQ(tokens[4].location, (SourceLocation{2, 9}));
  EXPECT_EQ(tokens[5].kind, TokenKind::newline);
  EXPECT_EQ(tokens[6].text, "y");
}

TEST(Tokenizer, CrLfAndLoneCrLineEndings) {
  const std::vector<Token> tokens = tokens_of("a = 1\r\nif a:\r\n    b = 2\rc = 3");
  std::vector<SourceLocation> names;
  for (const Token& token : tokens) {
    if (token.kind == TokenKind::name) {
      names.push_back(token.location);
    }
  }
  EXPECT_EQ(names, (std::vector<SourceLocation>{{1, 1}, {2, 4}, {3, 5}, {4, 1}}));
}

TEST(Tokenizer, TabsIndentation) {
  EXPECT_EQ(
      describe("if a:\n\tb\n\tif c:\n\t\td\n"),
      (Tokens{"KEYWORD:if", "NAME:a", "OP::", "NEWLINE", "INDENT", "NAME:b", "NEWLINE", "KEYWORD:if",
              "NAME:c", "OP::", "NEWLINE", "INDENT", "NAME:d", "NEWLINE", "DEDENT", "DEDENT", "ENDMARKER"}));
}

TEST(Tokenizer, EmptyAndCommentOnlyInput) {
  EXPECT_EQ(describe(""), (Tokens{"ENDMARKER"}));
  EXPECT_EQ(describe("\n\n   \n"), (Tokens{"ENDMARKER"}));
  EXPECT_EQ(describe("# only a comment"), (Tokens{"ENDMARKER"}));
}

TEST(Tokenizer, MissingTrailingNewlineStillEndsTheLine) {
  EXPECT_EQ(describe("x"), (Tokens{"NAME:x", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, ByteOrderMarkIsSkipped) {
  EXPECT_EQ(describe("\xEF\xBB\xBFx\n"), (Tokens{"NAME:x", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, UnicodeIdentifiersAndColumnsInCodePoints) {
  const std::vector<Token> tokens = tokens_of("πρόβλημα = naïve + 变量\n");
  ASSERT_EQ(tokens.size(), 7U);
  EXPECT_EQ(tokens[0].kind, TokenKind::name);
  EXPECT_EQ(tokens[0].text, "πρόβλημα");
  EXPECT_EQ(tokens[1].location, (SourceLocation{1, 10}));
  EXPECT_EQ(tokens[2].text, "naïve");
  EXPECT_EQ(tokens[4].text, "变量");
  EXPECT_EQ(tokens[4].location, (SourceLocation{1, 20}));
}

TEST(Tokenizer, IdentifiersAreNormalisedToNfkcAsPythonDoes) {
  // PEP 3131: `ｔｏｒｃｈ` (fullwidth), `𝐭𝐨𝐫𝐜𝐡` (mathematical bold) and `ﬁ` (a ligature) name what
  // their NFKC forms name; locations still count the source's code points.
  const std::vector<Token> tokens = tokens_of("ｔｏｒｃｈ.ｓｏｆｔｍａｘ(𝐱) + ﬁle\n");
  ASSERT_GE(tokens.size(), 8U);
  EXPECT_EQ(tokens[0].kind, TokenKind::name);
  EXPECT_EQ(tokens[0].text, "torch");
  EXPECT_EQ(tokens[2].text, "softmax");
  EXPECT_EQ(tokens[2].location, (SourceLocation{1, 7}));
  EXPECT_EQ(tokens[4].text, "x");
  EXPECT_EQ(tokens[7].text, "file");
  // Composed and decomposed spellings of one name are one name.
  EXPECT_EQ(tokens_of("caf\u00e9")[0].text, tokens_of("cafe\u0301")[0].text);
}

TEST(Tokenizer, NfkcLeavesStringsAndKeywordsAlone) {
  const std::vector<Token> tokens = tokens_of("s = 'ｔｏｒｃｈ'\nｉｆ\n");
  EXPECT_EQ(tokens[2].kind, TokenKind::string);
  EXPECT_EQ(tokens[2].text, "'ｔｏｒｃｈ'");   // a string's value is not an identifier
  EXPECT_EQ(tokens[4].kind, TokenKind::name);  // CPython matches keywords before normalising
  EXPECT_EQ(tokens[4].text, "if");
}

TEST(Tokenizer, ValidNumbers) {
  for (const std::string_view number :
       {"0",           "00",   "0_0",  "123", "1_000_000", "0x_FF",  "0XdeadBEEF", "0o17",   "0O7_7",
        "0b1010_1010", "0B1",  "3.14", "10.", ".001",      "1e10",   "1E-5",       "2.5e+3", "1_0.0_1e1_0",
        "3j",          "1.5J", "1e3j", ".5j", "0777.0",    "0777e1", "09.5",       "0j"}) {
    expect_single_token(number, TokenKind::number);
  }
}

TEST(Tokenizer, InvalidNumbers) {
  EXPECT_EQ(
      error_of("0777").message,
      "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
  EXPECT_EQ(error_of("x = 1__0").message, "invalid decimal literal");
  EXPECT_EQ(error_of("x = 1__0").location, (SourceLocation{1, 5}));
  EXPECT_EQ(error_of("1_").message, "invalid decimal literal");
  EXPECT_EQ(error_of("0x").message, "invalid hexadecimal literal");
  EXPECT_EQ(error_of("0b2").message, "invalid binary literal");
  EXPECT_EQ(error_of("0o8").message, "invalid octal literal");
  EXPECT_EQ(error_of("0o78").message, "invalid digit '8' in octal literal");
  EXPECT_EQ(error_of("1abc").message, "invalid decimal literal");
  EXPECT_EQ(error_of("0x1g").message, "invalid decimal literal");
}

TEST(Tokenizer, KeywordGluedToNumberIsAccepted) {
  EXPECT_EQ(describe("1if x else 2\n"),
            (Tokens{"NUMBER:1", "KEYWORD:if", "NAME:x", "KEYWORD:else", "NUMBER:2", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, Operators) {
  EXPECT_EQ(describe("a **= b //= c >>= d <<= e @= f -> g := h ... != == <= >= ** // @ ~ ^ | & %\n"),
            (Tokens{"NAME:a", "OP:**=", "NAME:b", "OP://=", "NAME:c",  "OP:>>=",   "NAME:d", "OP:<<=",
                    "NAME:e", "OP:@=",  "NAME:f", "OP:->",  "NAME:g",  "OP::=",    "NAME:h", "OP:...",
                    "OP:!=",  "OP:==",  "OP:<=",  "OP:>=",  "OP:**",   "OP://",    "OP:@",   "OP:~",
                    "OP:^",   "OP:|",   "OP:&",   "OP:%",   "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(describe("x.y"), (Tokens{"NAME:x", "OP:.", "NAME:y", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(describe("1..real"), (Tokens{"NUMBER:1.", "OP:.", "NAME:real", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, StringsWithEveryPrefix) {
  for (const std::string_view prefix :
       {"",   "r",  "R",  "b",  "B",  "u",  "U",  "f",  "F",  "br", "bR", "Br", "BR",
        "rb", "rB", "Rb", "RB", "fr", "fR", "Fr", "FR", "rf", "rF", "Rf", "RF"}) {
    for (const std::string_view body : {"'x'", R"("x")", "'''x'''", R"("""x""")"}) {
      expect_single_token(std::string(prefix) + std::string(body), TokenKind::string);
    }
  }
}

TEST(Tokenizer, StringContentsAndEscapes) {
  expect_single_token(R"("a\"b")", TokenKind::string);
  expect_single_token(R"('it\'s')", TokenKind::string);
  expect_single_token(R"(r"\"")", TokenKind::string);
  expect_single_token(R"('\\')", TokenKind::string);
  expect_single_token("'''a'b\"c\n''d'''", TokenKind::string);
  expect_single_token(R"("""x""y""")", TokenKind::string);
  expect_single_token("'a\\\nb'", TokenKind::string);  // backslash-newline inside a string
  expect_single_token("'π'", TokenKind::string);
}

TEST(Tokenizer, MultiLineStringLocation) {
  const std::vector<Token> tokens = tokens_of("x = '''a\nbc''' + y\n");
  ASSERT_GE(tokens.size(), 5U);
  EXPECT_EQ(tokens[2].location, (SourceLocation{1, 5}));
  EXPECT_EQ(tokens[2].end, (SourceLocation{2, 6}));
  EXPECT_EQ(tokens[4].location, (SourceLocation{2, 9}));
}

TEST(Tokenizer, NonStringPrefixIsAName) {
  EXPECT_EQ(describe("ur'x'"), (Tokens{"NAME:ur", "STRING:'x'", "NEWLINE", "ENDMARKER"}));
}

std::vector<std::string> fields_of(std::string_view fstring) {
  const std::vector<Token> tokens = tokens_of(fstring);
  EXPECT_EQ(tokens.size(), 3U) << fstring;
  std::vector<std::string> fields;
  if (!tokens.empty()) {
    EXPECT_EQ(tokens[0].kind, TokenKind::string);
    EXPECT_EQ(tokens[0].text, fstring);
    for (const FStringField& field : tokens[0].fstring_fields) {
      fields.push_back(field.expression);
    }
  }
  return fields;
}

using Fields = std::vector<std::string>;

TEST(Tokenizer, FStringFields) {
  EXPECT_EQ(fields_of(R"(f"{x}")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(f"a {x + 1} b {y}")"), (Fields{"x + 1", "y"}));
  EXPECT_EQ(fields_of(R"(f"{x!r:>{width}.{precision}}")"), (Fields{"x", "width", "precision"}));
  EXPECT_EQ(fields_of(R"(f"{x=}")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(f"{x = !s:^10}")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(f"{{literal}} {{ {x} }}")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(f"{ {'a': 1}['a'] }")"), (Fields{"{'a': 1}['a']"}));
  EXPECT_EQ(fields_of(R"(f"{(lambda v: v * 2)(3)}")"), (Fields{"(lambda v: v * 2)(3)"}));
  EXPECT_EQ(fields_of(R"(f"{a if b else c:>{w}}")"), (Fields{"a if b else c", "w"}));
  EXPECT_EQ(fields_of(R"(f"{x:=10}")"), (Fields{"x"}));  // `:` starts the format spec "=10"
  EXPECT_EQ(fields_of(R"(f"{a != b}")"), (Fields{"a != b"}));
  EXPECT_EQ(fields_of(R"(f"\N{BULLET} {x}")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(rf"\{x}\d")"), (Fields{"x"}));
  EXPECT_EQ(fields_of(R"(F'{x}')"), (Fields{"x"}));
}

TEST(Tokenizer, FStringPep701SameQuotesAndNesting) {
  EXPECT_EQ(fields_of(R"(f"{d["key"]}")"), (Fields{R"(d["key"])"}));
  EXPECT_EQ(fields_of(R"(f"{f"{x}"}")"), (Fields{R"(f"{x}")"}));
  EXPECT_EQ(fields_of(R"(f"{", ".join(items)}")"), (Fields{R"(", ".join(items))"}));
  EXPECT_EQ(fields_of(R"(f'{f'{f'{x}'}'}')"), (Fields{"f'{f'{x}'}'"}));
}

TEST(Tokenizer, MultiLineFStringField) {
  const std::vector<Token> tokens = tokens_of("f'''{\n  x  # comment\n  + 1\n}'''\n");
  ASSERT_EQ(tokens.size(), 3U);
  ASSERT_EQ(tokens[0].fstring_fields.size(), 1U);
  EXPECT_EQ(tokens[0].fstring_fields[0].location, (SourceLocation{2, 3}));
}

TEST(Tokenizer, FStringFieldLocation) {
  const std::vector<Token> tokens = tokens_of("y = f'ab{ cd }'\n");
  ASSERT_EQ(tokens[2].fstring_fields.size(), 1U);
  EXPECT_EQ(tokens[2].fstring_fields[0].expression, "cd");
  EXPECT_EQ(tokens[2].fstring_fields[0].location, (SourceLocation{1, 11}));
}

TEST(Tokenizer, FStringErrors) {
  EXPECT_EQ(error_of(R"(f"{}")").message, "f-string: valid expression required before '}'");
  EXPECT_EQ(error_of(R"(f"}")").message, "f-string: single '}' is not allowed");
  EXPECT_EQ(error_of(R"(f"{x!z}")").message,
            "f-string: invalid conversion character: expected 's', 'r', or 'a'");
  EXPECT_EQ(error_of(R"(f"{x)").location, (SourceLocation{1, 4}));
  EXPECT_EQ(error_of("f'abc").message, "unterminated f-string literal (detected at line 1)");
  EXPECT_EQ(error_of(R"(f"{x:{y}")").message, "f-string: expecting '}'");
  EXPECT_EQ(error_of(R"(f"{a)}")").message, "f-string: unmatched ')'");
}

TEST(Tokenizer, UnterminatedStrings) {
  const TokenizeError single = error_of("x = 'abc\ny = 1\n");
  EXPECT_EQ(single.message, "unterminated string literal (detected at line 1)");
  EXPECT_EQ(single.location, (SourceLocation{1, 5}));
  const TokenizeError triple = error_of("x = 1\ns = \"\"\"abc\n\ndef\n");
  EXPECT_EQ(triple.message, "unterminated triple-quoted string literal (detected at line 5)");
  EXPECT_EQ(triple.location, (SourceLocation{2, 5}));
}

TEST(Tokenizer, BracketErrors) {
  const TokenizeError unmatched = error_of("x = 1)\n");
  EXPECT_EQ(unmatched.message, "unmatched ')'");
  EXPECT_EQ(unmatched.location, (SourceLocation{1, 6}));
  const TokenizeError mismatched = error_of("x = (1,\n 2]\n");
  EXPECT_EQ(mismatched.message, "closing parenthesis ']' does not match opening parenthesis '(' on line 1");
  EXPECT_EQ(mismatched.location, (SourceLocation{2, 3}));
  const TokenizeError unclosed = error_of("foo(a,\n  [b,\n  c]\n");
  EXPECT_EQ(unclosed.message, "'(' was never closed");
  EXPECT_EQ(unclosed.location, (SourceLocation{1, 4}));
  EXPECT_EQ(error_of(std::string(300, '(')).message, "too many nested parentheses");
}

TEST(Tokenizer, IndentationErrors) {
  const TokenizeError dedent = error_of("if x:\n    a\n  b\n");
  EXPECT_EQ(dedent.message, "unindent does not match any outer indentation level");
  EXPECT_EQ(dedent.location, (SourceLocation{3, 3}));
  EXPECT_EQ(error_of("if x:\n        a\n\tb\n").message,
            "inconsistent use of tabs and spaces in indentation");
  std::string deep;
  for (int level = 0; level < 120; ++level) {
    deep += std::string(static_cast<std::size_t>(level), ' ') + "if x:\n";
  }
  EXPECT_EQ(error_of(deep).message, "too many levels of indentation");
}

TEST(Tokenizer, InvalidCharacters) {
  const TokenizeError dollar = error_of("x = $y\n");
  EXPECT_EQ(dollar.message, "invalid character '$' (U+0024)");
  EXPECT_EQ(dollar.location, (SourceLocation{1, 5}));
  EXPECT_EQ(error_of("print(\xE2\x80\x9Chi\xE2\x80\x9D)").message,
            "invalid character '\xE2\x80\x9C' (U+201C)");
  EXPECT_EQ(error_of("x = 1\xC2\xA0+ 2").message, "invalid non-printable character U+00A0");
  EXPECT_EQ(error_of("a ? b").message, "invalid character '?' (U+003F)");
  EXPECT_EQ(error_of("a ! b").message, "invalid character '!' (U+0021)");
}

TEST(Tokenizer, NullBytesAndInvalidUtf8) {
  const TokenizeError null_byte = error_of(std::string_view("x = 1\ny\0", 8));
  EXPECT_EQ(null_byte.message, "source code cannot contain null bytes");
  EXPECT_EQ(null_byte.location, (SourceLocation{2, 2}));
  EXPECT_EQ(error_of("x = '\xFF'").message, "invalid UTF-8 byte 0xFF");
  EXPECT_EQ(error_of("\xC0\x80").message, "invalid UTF-8 byte 0xC0");  // overlong encoding
}

// The encoding check skips ASCII without decoding; its error locations still count code points,
// and carriage returns still end lines.
TEST(Tokenizer, EncodingErrorLocationsCountCodePoints) {
  const TokenizeError after_accent = error_of("s = 'caf\xC3\xA9'\n\xC3\xA9\xFF");
  EXPECT_EQ(after_accent.message, "invalid UTF-8 byte 0xFF");
  EXPECT_EQ(after_accent.location, (SourceLocation{2, 2}));
  const TokenizeError null_after_crlf = error_of(std::string_view("x = '\xE2\x82\xAC'\r\n\r\nab\0", 16));
  EXPECT_EQ(null_after_crlf.message, "source code cannot contain null bytes");
  EXPECT_EQ(null_after_crlf.location, (SourceLocation{3, 3}));
  const TokenizeResult crlf = tokenize("x = 1\r\ny = 2\r");
  ASSERT_TRUE(crlf.ok());
  EXPECT_EQ(crlf.tokens.at(4).location, (SourceLocation{2, 1}));
  EXPECT_EQ(crlf.tokens.at(4).text, "y");
}

TEST(Tokenizer, LineContinuationErrors) {
  EXPECT_EQ(error_of("x = 1 \\ 2\n").message, "unexpected character after line continuation character");
  EXPECT_EQ(error_of("x = 1 + \\").message, "unexpected end of file after line continuation character");
}

TEST(Tokenizer, BytesMustBeAscii) {
  EXPECT_EQ(error_of("b'caf\xC3\xA9'").message, "bytes can only contain ASCII literal characters");
}

TEST(Tokenizer, FragmentInsideBrackets) {
  TokenizeOptions options;
  options.start = {4, 10};
  options.inside_brackets = true;
  const TokenizeResult result = tokenize("a +\n  b", options);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.tokens.size(), 4U);
  EXPECT_EQ(result.tokens[0].location, (SourceLocation{4, 10}));
  EXPECT_EQ(result.tokens[2].location, (SourceLocation{5, 3}));
  EXPECT_EQ(result.tokens[3].kind, TokenKind::end_of_input);
}

TEST(Tokenizer, TokenKindNames) {
  EXPECT_EQ(to_string(TokenKind::name), "NAME");
  EXPECT_EQ(to_string(TokenKind::end_of_input), "ENDMARKER");
}

}  // namespace
}  // namespace kforge::source
