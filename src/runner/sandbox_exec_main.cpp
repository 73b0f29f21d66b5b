// kforge-sandbox-exec: runs one command exactly as kforge runs a candidate worker (same environment,
// same sandbox, same memory watchdog), sends it one request on fd 3, waits for one reply on fd 4 and
// prints what happened as JSON. scripts/sandbox-probe drives it to check each layer on a machine.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"

namespace {

using kforge::runner::WorkerFailure;
using kforge::runner::WorkerProcess;

struct Options {
  bool gpu = false;
  std::vector<pid_t> protected_pids;
  std::vector<std::string> secrets;
  std::string request = R"({"op": "probe"})";
  double timeout_s = 300.0;
  std::optional<std::string> python;
  std::vector<std::string> command;
};

int run(const Options& options) {
  const auto python = kforge::runner::find_python_environment(
      options.python ? std::optional<std::filesystem::path>(*options.python) : std::nullopt);
  const auto scratch = kforge::runner::ScratchSpace::create();
  std::vector<std::filesystem::path> secrets(options.secrets.begin(), options.secrets.end());
  auto launch = kforge::runner::make_candidate_launch(
      python, scratch.directory(), !options.gpu,
      kforge::runner::CandidateSandboxContext{options.protected_pids, options.timeout_s, secrets,
                                              scratch.transfer_directory()});
  launch.hidden_reply_channel = false;  // the command is a probe that answers on fd 4, not the worker
  launch.executable = options.command.front();
  launch.arguments.assign(options.command.begin() + 1, options.command.end());
  nlohmann::json result = {{"private_dir", launch.working_directory.string()}};
  try {
    auto worker = WorkerProcess::start(launch);
    result["pid"] = worker.pid();
    result["sandbox"] = worker.sandbox_status();
    const auto request = nlohmann::json::parse(options.request);
    const auto reply =
        worker.call(request, std::chrono::milliseconds(static_cast<long>(options.timeout_s * 1000)));
    if (const auto* failure = std::get_if<WorkerFailure>(&reply)) {
      result["failure"] = {
          {"message", failure->message}, {"signal", failure->signal}, {"exit_code", failure->exit_code}};
    } else {
      result["reply"] = std::get<nlohmann::json>(reply);
    }
    worker.stop();
    result["log"] = worker.log_tail();
  } catch (const std::exception& error) {
    result["error"] = error.what();
    std::cout << result.dump(2) << "\n";
    return 2;
  }
  std::cout << result.dump(2) << "\n";
  return result.contains("reply") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe must give an error, not kill the supervisor
  CLI::App app{"Run a command in kforge's candidate sandbox and print the sandbox status and its reply"};
  Options options;
  app.add_flag("--gpu", options.gpu,
               "sandbox for a GPU run (device files, no RLIMIT_AS, no TRITON_INTERPRET)");
  app.add_option("--protect", options.protected_pids, "a pid the command may not signal (the judge)");
  app.add_option("--secret", options.secrets, "a file that must stay unreadable (warned about if reachable)");
  app.add_option("--request", options.request, "the JSON request sent on fd 3");
  app.add_option("--timeout", options.timeout_s, "seconds to wait for the reply")->check(CLI::PositiveNumber);
  app.add_option("--python", options.python, "the Python whose installation the sandbox opens");
  app.prefix_command();  // everything after the options (or after --) is the command, untouched
  app.footer("Usage: kforge-sandbox-exec [OPTIONS] -- /abs/path/to/program [ARGS...]");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  options.command = app.remaining();
  if (!options.command.empty() && options.command.front() == "--") {
    options.command.erase(options.command.begin());
  }
  if (options.command.empty()) {
    std::cerr << "kforge-sandbox-exec: no command given\n" << app.help();
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cout << nlohmann::json{{"error", error.what()}}.dump(2) << "\n";
    return 2;
  }
}
