#include <CLI/CLI.hpp>
#include <csignal>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "cli/bench_command.hpp"
#include "cli/build_info.hpp"
#include "cli/common_options.hpp"
#include "cli/data_command.hpp"
#include "cli/eval_command.hpp"
#include "cli/knobs_command.hpp"
#include "cli/optimize_command.hpp"
#include "cli/profile_command.hpp"
#include "cli/serve_command.hpp"
#include "runner/fatal_signal_report.hpp"
#include "runner/interrupt_handling.hpp"
#include "runner/stale_scratch.hpp"

namespace {

// "kforge eval", "kforge data sft": the command the user ran, for its messages.
std::string command_label(const CLI::App& app) {
  std::string label = "kforge";
  for (const auto* command = &app; !command->get_subcommands().empty();) {
    command = command->get_subcommands().front();
    label += " " + command->get_name();
  }
  return label;
}
}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe must give an error, not kill kforge
  kforge::runner::install_fatal_signal_report();
  CLI::App app{"kforge: verifies, times and rewards Triton kernels against PyTorch references"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kforge::cli::version_text());
  const auto run_eval = kforge::cli::add_eval_command(app);
  const auto run_bench = kforge::cli::add_bench_command(app);
  const auto run_serve = kforge::cli::add_serve_command(app);
  const auto run_data = kforge::cli::add_data_command(app);
  const auto run_profile = kforge::cli::add_profile_command(app);
  const auto run_optimize = kforge::cli::add_optimize_command(app);
  const auto run_knobs = kforge::cli::add_knobs_command(app);
  kforge::cli::show_defaults(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return 2;  // usage errors always exit 2, whatever CLI11's own code
  }
  const auto label = command_label(app);
  kforge::runner::sweep_stale_scratch(
      kforge::runner::scratch_parents());  // what killed runs left in /dev/shm and /tmp
  // kforge serve drains on SIGTERM/SIGINT itself; every other command stops and cleans up at once.
  std::optional<kforge::runner::InterruptHandling> interrupts;
  if (label != "kforge serve") {
    interrupts.emplace(label);
  }
  try {
    for (const auto& run : {run_eval, run_bench, run_serve, run_data, run_profile, run_optimize, run_knobs}) {
      if (const int code = run(); code >= 0) {
        return code;
      }
    }
    return 2;
  } catch (const std::runtime_error& error) {  // a file, a folder, the environment: the message says
    std::cerr << label << ": " << error.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& error) {
    std::cerr << label << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << label << ": internal error (please report it): " << error.what() << "\n";
    return 2;
  }
}
