#include "cli/profile_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/common_options.hpp"
#include "cli/profile_settings.hpp"
#include "profile/profile_run.hpp"
#include "report/profile_terminal_report.hpp"
#include "report/terminal_report.hpp"
#include "runner/environment_probe.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "verify/eval_pipeline.hpp"
#include "verify/interpreter_sizes.hpp"

namespace kforge::cli {
namespace {

struct ProfileOptions {
  verify::EvalSettings settings;
  std::vector<std::string> sizes;
  std::string python;
  std::string ncu;
  bool no_ncu = false;
  std::string ceilings;
  bool json = false;
  std::string output;
  double run_timeout_s = 600;
};

// Nsight Compute as the options ask: none, the given one, or the one found.
void choose_ncu(const ProfileOptions& options, profile::ProfileRunSettings& run) {
  if (options.no_ncu) {
    run.ncu_missing = "--no-ncu was given";
    return;
  }
  run.ncu = profile::find_ncu(options.ncu.empty() ? std::nullopt
                                                  : std::optional<std::filesystem::path>(options.ncu));
  if (!run.ncu) {
    run.ncu_missing =
        options.ncu.empty()
            ? "ncu was not found ($KFORGE_NCU, PATH, /usr/local/cuda/bin); install Nsight Compute or "
              "pass --ncu PATH"
            : fmt::format("--ncu {} is not an executable file", options.ncu);
  }
}

// The profile of an accepted candidate on a GPU; on the CPU only the verdict, with the reason.
nlohmann::json profile_document(const ProfileOptions& options, const nlohmann::json& verdict) {
  nlohmann::json document = {{"schema", "kforge.profile/1"},
                             {"problem", options.settings.problem_path.string()},
                             {"candidate", options.settings.candidate_path.string()},
                             {"device", verdict["device"]},
                             {"verdict", verdict},
                             {"ncu", {{"used", false}}},
                             {"ceilings", nullptr},
                             {"kernels", nlohmann::json::array()},
                             {"fraction_of_roofline", nullptr},
                             {"floor_seconds", nullptr},
                             {"notes", nlohmann::json::array()}};
  const auto device = verdict["device"].value("device", std::string("cpu"));
  if (device.rfind("cuda", 0) != 0) {
    document["notes"].push_back(
        "no GPU: on the CPU the Triton interpreter runs the kernels and compiles none, so there is no Nsight "
        "Compute profile, no compiled-kernel facts and no roofline; the verdict above is all there is");
    return document;
  }
  const auto extracted = source::extract_code(source::read_text_file(options.settings.candidate_path));
  auto run = profile_run_settings(options.settings, extracted.code ? extracted.code->code : std::string(),
                                  device, verdict["device"].value("uuid", device));
  run.timeout_s = options.run_timeout_s;
  if (!options.ceilings.empty()) {
    run.ceilings_file = options.ceilings;
  }
  choose_ncu(options, run);
  profile::ProfileEvidence evidence;
  try {
    evidence = profile::gather_profile_evidence(run);
  } catch (const std::exception& error) {  // no Python, a scratch folder, or the GPU's lease: say which
    document["notes"].push_back(fmt::format("the profiled run could not start: {}", error.what()));
    return document;
  }
  const auto report = profile::build_profile_report(evidence);
  auto body = profile::to_json(report);
  document["kernels"] = body["kernels"];
  document["fraction_of_roofline"] = body["fraction_of_roofline"];
  document["floor_seconds"] = body["floor_seconds"];
  document["notes"] = body["notes"];
  document["ncu"] = {
      {"used", evidence.ncu.has_value()},
      {"path", run.ncu ? nlohmann::json(run.ncu->string()) : nlohmann::json(nullptr)},
      {"reason", evidence.ncu ? nlohmann::json(nullptr) : nlohmann::json(evidence.ncu_unavailable)}};
  if (evidence.ceilings) {
    document["ceilings"] = profile::to_json(*evidence.ceilings);
  }
  return document;
}

int run_profile(ProfileOptions& options) {
  auto& settings = options.settings;
  for (const auto& pair : options.sizes) {
    const auto equals = pair.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == pair.size()) {
      std::cerr << fmt::format("kforge profile: --size expects NAME=VALUE, got '{}'\n", pair);
      return 2;
    }
    settings.sizes[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  if (!options.python.empty()) {
    settings.python = options.python;
  }
  if (const auto note = verify::choose_interpreter_sizes(settings, runner::resolve_device(settings.device));
      !note.text.empty()) {
    std::cerr << note.text << "\n";
  }
  const auto verdict = verify::to_json(verify::evaluate(settings));
  const auto outcome = verdict.value("outcome", "error");
  if (outcome != "accepted") {
    std::cout << (options.json ? verdict.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                               : report::render_terminal(verdict, false));
    std::cerr
        << (outcome == "rejected"
                ? "kforge profile: only an accepted candidate is profiled (a wrong or dishonest kernel's "
                  "speed means nothing); fix what the verdict says first\n"
                : "kforge profile: the evaluation failed (the error above); nothing was profiled\n");
    return outcome == "rejected" ? 1 : 2;
  }
  const auto document = profile_document(options, verdict);
  const auto text = document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!options.output.empty()) {
    std::ofstream(options.output) << text << "\n";
  }
  std::cout << (options.json ? text + "\n" : report::render_profile(document));
  return 0;
}

}  // namespace

std::function<int()> add_profile_command(CLI::App& app) {
  auto options = std::make_shared<ProfileOptions>();
  auto& settings = options->settings;
  auto* command = app.add_subcommand(
      "profile",
      "Verify a candidate, then profile its kernels: Nsight Compute, Triton's compiled-kernel facts, "
      "the roofline of this GPU and a diagnosis (docs/profile.md)");
  command
      ->add_option("--problem,-p", settings.problem_path, "problem file (Model, get_inputs, get_init_inputs)")
      ->option_text("FILE")
      ->required();
  command
      ->add_option("--candidate,-c", settings.candidate_path,
                   "candidate file (class ModelNew) or an LLM response")
      ->option_text("FILE")
      ->required();
  add_device_option(*command, settings.device);
  command
      ->add_option("--ncu", options->ncu,
                   "Nsight Compute executable (default: $KFORGE_NCU, ncu on PATH, /usr/local/cuda/bin/ncu)")
      ->option_text("FILE");
  command->add_flag("--no-ncu", options->no_ncu,
                    "timing and compiled-kernel facts only, without Nsight Compute");
  command
      ->add_option(
          "--ceilings", options->ceilings,
          "roofline ceilings JSON (python -m kforge.worker.ceilings); default: measured once per GPU "
          "model and kept beside the result store")
      ->option_text("FILE");
  add_json_flag(*command, options->json, "print the JSON profile instead of the table");
  add_output_option(*command, options->output, "also write the JSON profile to this file");
  command->add_option("--seed", settings.seed, "seed of model construction and inputs")
      ->option_text("N")
      ->capture_default_str();
  command->add_flag("--small", settings.small, "use the problem's KFORGE_SMALL sizes");
  command->add_option("--size", options->sizes, "override a module-level size constant: NAME=VALUE")
      ->option_text("NAME=VALUE")
      ->take_all();
  add_timeout_option(*command, settings.timeout_s);
  add_time_budget_option(*command, settings.timing.time_budget_s,
                         "seconds of timing at most while verifying");
  command
      ->add_option("--profile-timeout", options->run_timeout_s,
                   "seconds allowed for the profiled run under ncu")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
  add_python_option(*command, options->python);
  return [options, command]() { return command->parsed() ? run_profile(*options) : -1; };
}

}  // namespace kforge::cli
