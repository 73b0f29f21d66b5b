#include "cli/common_options.hpp"

#include <fmt/format.h>

#include <iostream>

#include "runner/environment_probe.hpp"

namespace kforge::cli {
namespace {

constexpr int kMaxTrials = 1000;

}  // namespace

CLI::Option* add_device_option(CLI::App& command, std::string& device) {
  return command
      .add_option("--device,-d", device,
                  "auto (a GPU if there is one, else the CPU with Triton's interpreter), cpu, or cuda:N")
      ->check(CLI::Validator([](const std::string& value) { return runner::device_request_problem(value); },
                             "", "device"))
      ->option_text("DEVICE")
      ->capture_default_str();
}

CLI::Option* add_trials_option(CLI::App& command, int& trials) {
  return command.add_option("--trials", trials, "correctness trials, each with fresh inputs from a new seed")
      ->check(CLI::Range(1, kMaxTrials))
      ->option_text("N")
      ->capture_default_str();
}

CLI::Option* add_timeout_option(CLI::App& command, double& seconds) {
  return command
      .add_option(
          "--timeout", seconds,
          "seconds allowed for each call into a worker (kforge's own worker start-up gets at least 120 s; "
          "kforge serve derives shorter limits from the reference's time)")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
}

CLI::Option* add_time_budget_option(CLI::App& command, double& seconds, const std::string& help) {
  return command.add_option("--time-budget", seconds, help)
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
}

CLI::Option* add_python_option(CLI::App& command, std::string& python) {
  return command
      .add_option("--python", python,
                  "Python interpreter with torch and triton (default: the project's .venv, $KFORGE_PYTHON, "
                  "or python3)")
      ->option_text("FILE");
}

CLI::Option* add_output_option(CLI::App& command, std::string& file, const std::string& help) {
  return command.add_option("--output,-o", file, help)->option_text("FILE");
}

CLI::Option* add_json_flag(CLI::App& command, bool& json, const std::string& help) {
  return command.add_flag("--json", json, help);
}

void add_llm_endpoint_options(CLI::App& command, optimize::ChatEndpoint& endpoint) {
  command
      .add_option("--llm-url", endpoint.url,
                  "the LLM's OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
      ->option_text("URL");
  command.add_option("--model", endpoint.model, "the model name the endpoint serves")->option_text("NAME");
  command
      .add_option("--api-key-env", endpoint.api_key_env,
                  "the environment variable holding the endpoint's key (unset: no key is sent)")
      ->option_text("NAME")
      ->capture_default_str();
  command.add_option("--temperature", endpoint.temperature, "LLM sampling temperature")
      ->check(CLI::Range(0.0, 2.0))
      ->option_text("X")
      ->capture_default_str();
  command.add_option("--max-tokens", endpoint.max_tokens, "LLM reply length limit")
      ->check(CLI::Range(64, 1000000))
      ->option_text("N")
      ->capture_default_str();
  command.add_option("--llm-timeout", endpoint.timeout_s, "seconds per LLM request")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
}

CLI::Option* add_deprecated_flag(CLI::App& command, const std::string& old_name, const std::string& new_name,
                                 bool& target) {
  return command.add_flag(old_name, target)->group("")->each([old_name, new_name](const std::string&) {
    warn_deprecated(old_name, new_name);
  });
}

void show_defaults(CLI::App& app) {
  for (auto* option : app.get_options()) {
    auto label = option->get_option_text();
    if (label.empty()) {
      continue;  // CLI11's own label already shows the default
    }
    const auto& fallback = option->get_default_str();
    if (!fallback.empty() && label.find('=') == std::string::npos) {
      label += "=" + fallback;
    }
    option->option_text(option->get_required() ? label + " REQUIRED" : label);
  }
  for (auto* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    show_defaults(*command);
  }
}

void warn_deprecated(const std::string& old_name, const std::string& new_name) {
  std::cerr << fmt::format("kforge: {} is deprecated and will go: use {} (the same meaning)\n", old_name,
                           new_name);
}

}  // namespace kforge::cli
