#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "optimize/chat_endpoint.hpp"

namespace kforge::cli {

// The options several commands share, each added one way everywhere: the same name, value label, help
// and range check, so that an option means one thing in every command (the table of names and
// meanings is docs/cli-options.json; tests/python/test_cli_vocabulary.py checks every --help against it).

// --device,-d auto|cpu|cuda:N, refused before anything starts when it is none of them.
CLI::Option* add_device_option(CLI::App& command, std::string& device);
// --trials N in [1, 1000].
CLI::Option* add_trials_option(CLI::App& command, int& trials);
// --timeout SECONDS for each call into a worker, positive.
CLI::Option* add_timeout_option(CLI::App& command, double& seconds);
// --time-budget SECONDS of timing at most, positive.
CLI::Option* add_time_budget_option(CLI::App& command, double& seconds, const std::string& help);
// --python FILE: the interpreter with torch and triton.
CLI::Option* add_python_option(CLI::App& command, std::string& python);
// --output,-o FILE: where the command's result goes (always a file).
CLI::Option* add_output_option(CLI::App& command, std::string& file, const std::string& help);
// --json: print JSON instead of the table.
CLI::Option* add_json_flag(CLI::App& command, bool& json, const std::string& help);

// --llm-url, --model, --api-key-env, --temperature, --max-tokens, --llm-timeout: an OpenAI-compatible
// endpoint (kforge optimize's LLM proposer, kforge data sft's LLM teacher).
void add_llm_endpoint_options(CLI::App& command, optimize::ChatEndpoint& endpoint);

// Shows each option's default after its value label ("--trials N=5") and REQUIRED after a required one's,
// in every command under `app`.
void show_defaults(CLI::App& app);

// An old spelling of an option that still works for now: hidden from --help, it sets the same value and
// prints "kforge: OLD is deprecated: use NEW" when used.
template <class T>
CLI::Option* add_deprecated_option(CLI::App& command, const std::string& old_name,
                                   const std::string& new_name, T& target);
CLI::Option* add_deprecated_flag(CLI::App& command, const std::string& old_name, const std::string& new_name,
                                 bool& target);

// The warning a deprecated spelling prints.
void warn_deprecated(const std::string& old_name, const std::string& new_name);

template <class T>
CLI::Option* add_deprecated_option(CLI::App& command, const std::string& old_name,
                                   const std::string& new_name, T& target) {
  return command.add_option(old_name, target)->group("")->each([old_name, new_name](const std::string&) {
    warn_deprecated(old_name, new_name);
  });
}

}  // namespace kforge::cli
