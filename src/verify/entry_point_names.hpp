#pragma once

#include <string>

#include "verify/verdict.hpp"

namespace kforge::verify {

// In kernel mode and TritonBench mode the candidate's ModelNew is an adapter kforge generated around the
// user's wrapper `entry`: its forward only calls `entry`. The verdict's words (stage summaries, findings,
// errors) then name `entry` where they say ModelNew.forward, so a message points at the user's code.
void name_entry_point(Verdict& verdict, const std::string& entry);
void name_entry_point(StageResult& stage, const std::string& entry);

}  // namespace kforge::verify
