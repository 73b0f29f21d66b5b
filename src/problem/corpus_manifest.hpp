#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kforge::problem {

// One candidate of a hostile/honest corpus (tests/corpus/manifest.json, format in
// tests/corpus/README.md) with the verdict it must get.
struct CorpusEntry {
  std::filesystem::path candidate;  // absolute
  std::filesystem::path problem;    // absolute path of problem.py
  std::string candidate_name;       // as written in the manifest
  std::string exploit_class;        // "honest" for honest candidates
  bool expect_accepted = false;
  std::string expect_stage;  // failing stage of an exploit
  std::string expect_check;  // a finding id in that stage
  std::string profile = "strict";
  bool gpu_only = false;
  bool cpu_only = false;  // a Triton-interpreter trick: on a GPU the kernel does not compile
  std::string why;
};

struct CorpusManifest {
  std::vector<CorpusEntry> entries;
};

// Reads DIR/manifest.json; problems are named relative to `problems_root` ("starter/04_softmax"
// means problems_root/starter/04_softmax/problem.py). Throws std::runtime_error naming the entry
// and the field when the manifest is malformed or a file is missing.
CorpusManifest load_corpus_manifest(const std::filesystem::path& corpus_dir,
                                    const std::filesystem::path& problems_root);

}  // namespace kforge::problem
