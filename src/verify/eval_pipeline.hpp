#pragma once

#include <optional>
#include <string>

#include "runner/candidate_zygote.hpp"
#include "runner/gpu_gate.hpp"
#include "verify/eval_observer.hpp"
#include "verify/eval_settings.hpp"
#include "verify/problem_session.hpp"
#include "verify/verdict.hpp"

namespace kforge::verify {

// Runs extract → static → compile → correctness → runtime → performance and returns the verdict.
// Never throws: every failure, the candidate's or the environment's, ends up in the verdict. Starts a
// judge of its own (only when the static stage passed). `observer`, when given, hears of each stage as it
// finishes and of the progress of long ones.
Verdict evaluate(const EvalSettings& settings, EvalObserver* observer = nullptr);

// Why the problem or candidate file cannot be read ("" when both can): the message the verdict's usage
// error would carry, for a caller that says it in one line instead.
std::string unreadable_input(const EvalSettings& settings);

// Only the stages that need no Python (reading the files, code extraction, static rules): the verdict
// when they decide it (a rejection, an unreadable file), nullopt when the candidate needs a judge. The
// verdict is the one `evaluate` would give. Lets a scheduler answer such candidates without a judge.
std::optional<Verdict> screen(const EvalSettings& settings);

// The same with a problem session shared with other evaluations (settings must have the session's
// key); `gate` serialises this GPU's timing against them (null: nothing else uses the GPU); `zygote`
// forks the candidate process (null: the candidate is started fresh).
Verdict evaluate_in_session(const EvalSettings& settings, ProblemSession& session, runner::GpuGate* gate,
                            runner::CandidateZygote* zygote);

}  // namespace kforge::verify
