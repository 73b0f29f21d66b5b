#pragma once

#include <string>
#include <vector>

#include "problem/corpus_manifest.hpp"

namespace kforge::problem {

// The entries `kforge bench --corpus DIR --only X --only Y` runs: those of class X or Y ("honest" is a
// class too), or whose candidate is X or Y (as the manifest writes it, or its file name); all of them
// when `only` is empty. Throws std::invalid_argument naming the classes when a name matches nothing.
std::vector<CorpusEntry> select_corpus_entries(const CorpusManifest& manifest,
                                               const std::vector<std::string>& only);

}  // namespace kforge::problem
