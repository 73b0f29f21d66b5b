#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "source/code_extraction.hpp"

namespace kforge::source {
namespace {

ExtractedCode extract_ok(std::string_view text) {
  ExtractionResult result = extract_code(text);
  EXPECT_TRUE(result.ok()) << result.error << "\n" << text;
  return result.code.value_or(ExtractedCode{});
}

std::string extract_error(std::string_view text) {
  const ExtractionResult result = extract_code(text);
  EXPECT_FALSE(result.ok()) << "expected an extraction error for:\n" << text;
  return result.error;
}

TEST(CodeExtraction, PlainPythonIsReturnedAsIs) {
  constexpr std::string_view kSource = "import torch\n\nclass ModelNew:\n    pass\n";
  const ExtractedCode code = extract_ok(kSource);
  EXPECT_EQ(code.code, kSource);
  EXPECT_FALSE(code.from_markdown);
  EXPECT_EQ(code.line_offset, 1);
  // The parse that recognised it is handed on, so static analysis need not parse it again.
  ASSERT_NE(code.parsed, nullptr);
  EXPECT_TRUE(code.parsed->ok());
}

TEST(CodeExtraction, ABlockOfAResponseComesWithoutAParse) {
  const ExtractedCode code = extract_ok("Here it is:\n\n```python\nclass ModelNew:\n    pass\n```\n");
  EXPECT_TRUE(code.from_markdown);
  EXPECT_EQ(code.parsed, nullptr);
}

TEST(CodeExtraction, PythonWithFencesInsideADocstringIsPlainPython) {
  constexpr std::string_view kSource =
      "def f():\n    \"\"\"Example:\n\n    ```python\n    f()\n    ```\n    \"\"\"\n";
  const ExtractedCode code = extract_ok(kSource);
  EXPECT_FALSE(code.from_markdown);
  EXPECT_EQ(code.code, kSource);
}

TEST(CodeExtraction, PlainPythonWithSyntaxErrorIsStillReturned) {
  constexpr std::string_view kSource = "import torch\n\ndef f(:\n    pass\n";
  const ExtractedCode code = extract_ok(kSource);
  EXPECT_FALSE(code.from_markdown);
  EXPECT_EQ(code.code, kSource);
}

TEST(CodeExtraction, SinglePythonBlock) {
  const ExtractedCode code =
      extract_ok("Here is the kernel:\n\n```python\nimport triton\nx = 1\n```\n\nDone.\n");
  EXPECT_TRUE(code.from_markdown);
  EXPECT_EQ(code.code, "import triton\nx = 1\n");
  EXPECT_EQ(code.line_offset, 4);
  EXPECT_EQ(code.to_original({2, 3}), (SourceLocation{5, 3}));
}

TEST(CodeExtraction, LanguageVariants) {
  for (const std::string_view fence :
       {"```python", "```py", "```Python3", "```", "~~~python", "~~~", "````python",
        "```python title=\"model.py\"", "```{.python}", "```py:model.py"}) {
    const std::string closing = fence.starts_with("~") ? "~~~" : (fence.starts_with("````") ? "````" : "```");
    const std::string text = "Intro\n" + std::string(fence) + "\nx = 1\n" + closing + "\n";
    const ExtractedCode code = extract_ok(text);
    EXPECT_EQ(code.code, "x = 1\n") << fence;
    EXPECT_EQ(code.line_offset, 3) << fence;
  }
}

TEST(CodeExtraction, PrefersTheBlockDefiningModelNew) {
  const ExtractedCode code = extract_ok(
      "First the reference:\n```python\nclass Model:\n    pass\n```\nNow the optimized one:\n```python\n"
      "import triton\n\nclass ModelNew(nn.Module):\n    pass\n```\nAnd a test:\n```python\nprint(1)\n```\n");
  EXPECT_EQ(code.code, "import triton\n\nclass ModelNew(nn.Module):\n    pass\n");
  EXPECT_EQ(code.line_offset, 8);
}

TEST(CodeExtraction, TakesTheLastBlockWhenSeveralDefineModelNew) {
  const ExtractedCode code = extract_ok(
      "Attempt 1:\n```python\nclass ModelNew:\n    v = 1\n```\nFixed version:\n```python\nclass ModelNew:\n  "
      "  v = 2\n"
      "```\n");
  EXPECT_EQ(code.code, "class ModelNew:\n    v = 2\n");
  EXPECT_EQ(code.line_offset, 8);
}

TEST(CodeExtraction, IgnoresNonPythonBlocks) {
  const ExtractedCode code =
      extract_ok("Run:\n```bash\npip install triton\n```\n```python\nclass ModelNewer: pass\n```\n");
  EXPECT_EQ(code.code, "class ModelNewer: pass\n");  // the only Python block, even without ModelNew
}

TEST(CodeExtraction, ModelNewNameMustMatchExactly) {
  EXPECT_EQ(
      extract_error("```python\nclass ModelNewer: pass\n```\n```python\nclass Model: pass\n```\n"),
      "2 Python code blocks in the response and none defines class ModelNew; cannot tell which one is the "
      "candidate");
}

TEST(CodeExtraction, IndentedFenceIsDedented) {
  const ExtractedCode code = extract_ok("1. Code:\n   ```python\n   def f():\n       return 1\n   ```\n");
  EXPECT_EQ(code.code, "def f():\n    return 1\n");
}

TEST(CodeExtraction, UnclosedFenceRunsToTheEnd) {
  const std::vector<CodeBlock> blocks = find_code_blocks("Text\n```python\nx = 1\ny = 2\n");
  ASSERT_EQ(blocks.size(), 1U);
  EXPECT_FALSE(blocks[0].closed);
  EXPECT_EQ(blocks[0].code, "x = 1\ny = 2\n");
  EXPECT_EQ(extract_ok("Text\n```python\nx = 1\n").code, "x = 1\n");
}

TEST(CodeExtraction, LongerFenceContainsShorterOne) {
  const std::vector<CodeBlock> blocks = find_code_blocks("````markdown\n```python\nx\n```\n````\n");
  ASSERT_EQ(blocks.size(), 1U);
  EXPECT_EQ(blocks[0].language, "markdown");
  EXPECT_EQ(blocks[0].code, "```python\nx\n```\n");
}

TEST(CodeExtraction, InlineTripleBackticksAreNotFences) {
  EXPECT_TRUE(find_code_blocks("Use ```x``` inline.\n").empty());
}

TEST(CodeExtraction, CrLfLineEndings) {
  const ExtractedCode code = extract_ok("Intro\r\n```python\r\nx = 1\r\n```\r\n");
  EXPECT_EQ(code.code, "x = 1\n");
  EXPECT_EQ(code.line_offset, 3);
}

TEST(CodeExtraction, MarkdownWithoutCodeBlock) {
  EXPECT_EQ(extract_error("I could not write the kernel, sorry.\nMaybe next time!\n"),
            "the text is neither Python source nor markdown with a fenced code block");
}

TEST(CodeExtraction, MarkdownWithOnlyOtherLanguages) {
  EXPECT_EQ(extract_error("Try this:\n```bash\nls\n```\n```cpp\nint x;\n```\n"),
            "no Python code block in the response (its 2 code block(s) are marked bash, cpp)");
}

TEST(CodeExtraction, PythonLanguageNames) {
  EXPECT_TRUE(is_python_language("python"));
  EXPECT_TRUE(is_python_language("py"));
  EXPECT_TRUE(is_python_language(""));
  EXPECT_FALSE(is_python_language("cuda"));
}

}  // namespace
}  // namespace kforge::source
