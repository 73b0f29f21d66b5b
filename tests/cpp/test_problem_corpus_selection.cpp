#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "problem/corpus_selection.hpp"

namespace kforge::problem {
namespace {

CorpusManifest manifest() {
  CorpusManifest result;
  const auto entry = [](std::string file, std::string exploit_class) {
    CorpusEntry item;
    item.candidate_name = std::move(file);
    item.exploit_class = std::move(exploit_class);
    return item;
  };
  result.entries = {entry("honest/softmax_two_pass.py", "honest"),
                    entry("exploits/torch-fallback/honest_looking_fallback.py", "torch-fallback"),
                    entry("exploits/side-stream/side.py", "side-stream")};
  return result;
}

std::vector<std::string> names(const std::vector<CorpusEntry>& entries) {
  std::vector<std::string> result;
  for (const auto& entry : entries) {
    result.push_back(entry.candidate_name);
  }
  return result;
}

TEST(CorpusSelection, AClassSelectsItsEntriesNotFilesWhoseNameContainsIt) {
  EXPECT_EQ(names(select_corpus_entries(manifest(), {"honest"})),
            std::vector<std::string>{"honest/softmax_two_pass.py"});
}

TEST(CorpusSelection, RepeatedNamesAccumulate) {
  EXPECT_EQ(names(select_corpus_entries(manifest(), {"honest", "side-stream"})),
            (std::vector<std::string>{"honest/softmax_two_pass.py", "exploits/side-stream/side.py"}));
  EXPECT_EQ(select_corpus_entries(manifest(), {}).size(), 3U);
}

TEST(CorpusSelection, ACandidateFileIsNamedByItsPathOrItsFileName) {
  EXPECT_EQ(names(select_corpus_entries(manifest(), {"honest_looking_fallback.py"})),
            std::vector<std::string>{"exploits/torch-fallback/honest_looking_fallback.py"});
  EXPECT_EQ(select_corpus_entries(manifest(), {"exploits/side-stream/side.py"}).size(), 1U);
}

TEST(CorpusSelection, AnUnknownNameListsTheClasses) {
  try {
    select_corpus_entries(manifest(), {"honest", "hnest"});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--only hnest"), std::string::npos) << message;
    EXPECT_NE(message.find("honest, side-stream, torch-fallback"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kforge::problem
