#include "cli/serve_command.hpp"

#include <fmt/format.h>
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/batch_run.hpp"
#include "cli/common_options.hpp"
#include "serve/evaluation_service.hpp"
#include "serve/http_server.hpp"
#include "serve/reward_api.hpp"
#include "serve/service_token.hpp"
#include "store/result_store.hpp"

namespace kforge::cli {
namespace {

struct ServeOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;
  std::string device = "auto";
  std::string token_file;
  std::string problems_dir;
  std::string trusted_problems;
  std::string python;
  std::size_t max_completions = 1024;
  std::size_t warm_judges = 8;
  double drain_s = 600.0;
  verify::EvalSettings settings;
  BatchOptions batch;
};

std::filesystem::path store_folder(const ServeOptions& options) {
  const std::filesystem::path store = options.batch.store.empty()
                                          ? store::ResultStore::default_path()
                                          : std::filesystem::path(options.batch.store);
  return store.parent_path();
}

std::filesystem::path problems_folder(const ServeOptions& options) {
  return !options.problems_dir.empty() ? std::filesystem::path(options.problems_dir)
                                       : store_folder(options) / "served-problems";
}

// The token: read from --token-file when that file exists, else a new one written there (or to
// serve-token next to the store) with mode 0600. Says where it is, never what it is.
std::string service_token(const ServeOptions& options) {
  const std::filesystem::path file = !options.token_file.empty() ? std::filesystem::path(options.token_file)
                                                                 : store_folder(options) / "serve-token";
  std::error_code error;
  if (!options.token_file.empty() && std::filesystem::exists(file, error)) {
    return serve::read_token_file(file);
  }
  auto token = serve::write_new_token(file);
  std::cerr << fmt::format(
      "kforge serve: wrote a new token to {} (mode 0600); clients send 'Authorization: Bearer <its first "
      "line>' (the Python client reads $KFORGE_TOKEN_FILE)\n",
      file.string());
  return token;
}

// Blocks SIGTERM, SIGINT and SIGHUP in every thread started after this, so the main thread can sigwait
// them.
sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int run_serve(ServeOptions& options) {
  const auto signals = block_stop_signals();
  auto& settings = options.settings;
  if (!options.python.empty()) {
    settings.python = options.python;
  }
  serve::ServiceOptions service_options;
  service_options.base = settings;
  auto& engine = service_options.engine;
  engine.devices = batch_devices(options.batch, options.device);
  engine.jobs_per_device = options.batch.jobs > 0 ? options.batch.jobs : default_jobs(engine.devices.size());
  engine.sessions_per_device = options.warm_judges;
  engine.use_zygote = !options.batch.no_zygote;
  engine.reuse_stored = !options.batch.fresh;
  engine.python = settings.python;
  std::unique_ptr<store::ResultStore> store;
  if (!options.batch.no_store) {
    store =
        store::ResultStore::open(options.batch.store.empty() ? store::ResultStore::default_path()
                                                             : std::filesystem::path(options.batch.store));
    engine.store = store.get();
  }
  serve::ProblemRegistry problems(problems_folder(options));
  if (!options.trusted_problems.empty()) {
    const auto count = problems.add_trusted_folder(options.trusted_problems);
    std::cerr << fmt::format("kforge serve: {} trusted problems from {} (judged outside the sandbox)\n",
                             count, options.trusted_problems);
  }
  serve::JobTable jobs;
  serve::ServiceMetrics metrics;
  serve::EvaluationService service(service_options, jobs, metrics);
  serve::ApiLimits limits;
  limits.max_completions = options.max_completions;
  const nlohmann::json about = {
      {"service", "kforge"},
      {"api", "v1"},
      {"devices", engine.devices},
      {"store", store ? nlohmann::json(store->path().string()) : nlohmann::json(nullptr)}};
  serve::RewardApi api(problems, jobs, service, metrics, service_token(options), limits, about);
  serve::HttpServerOptions http;
  http.host = options.host;
  http.port = options.port;
  http.on_rejected = [&metrics](int status, const std::string& code) { metrics.rejected(status, code); };
  serve::HttpServer server(http,
                           [&api](const serve::HttpRequest& request, const serve::HttpResponder& respond) {
                             api.handle(request, respond);
                           });
  try {
    server.start();
  } catch (const std::runtime_error& error) {
    std::cerr << fmt::format(
        "kforge serve: {}; if another program (perhaps another kforge serve) holds port {}, choose another "
        "with --port P, or --port 0 for any free one\n",
        error.what(), options.port);
    return 2;
  }
  api.set_in_flight_source([&server]() { return server.in_flight(); });
  std::cerr << fmt::format("kforge serve: listening on http://{}:{} (devices {}; store {})\n", options.host,
                           server.port(), fmt::join(engine.devices, ","),
                           store ? store->path().string() : "off")
            << std::flush;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::cerr << fmt::format("kforge serve: {} received, finishing the evaluations in flight\n",
                           signal_number == SIGTERM  ? "SIGTERM"
                           : signal_number == SIGHUP ? "SIGHUP"
                                                     : "SIGINT")
            << std::flush;
  service.drain();
  // The waiting requests are answered now: the table outlives the API whose callbacks its thread runs,
  // so no callback may be left to run once the API goes.
  jobs.close();
  server.stop(std::chrono::milliseconds(static_cast<long>(options.drain_s * 1000.0)));
  std::cerr << "kforge serve: stopped\n";
  return 0;
}

}  // namespace

std::function<int()> add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  auto* serve =
      app.add_subcommand("serve", "run the reward service: an HTTP/JSON API over the evaluation engine");
  auto& settings = options->settings;
  serve->add_option("--host", options->host, "address to listen on (loopback by default)")
      ->option_text("ADDRESS")
      ->capture_default_str();
  serve->add_option("--port", options->port, "port (0: any free port, printed at start)")
      ->option_text("N")
      ->capture_default_str();
  add_device_option(*serve, options->device);
  serve
      ->add_option("--token-file", options->token_file,
                   "file whose first line is the bearer token every request but /v1/health must carry; "
                   "written with a new token (mode 0600) when missing (default: serve-token next to the "
                   "store, a new token each start)")
      ->option_text("FILE");
  serve
      ->add_option("--problems-dir", options->problems_dir,
                   "where problems sent by clients are kept (default: served-problems next to the store)")
      ->option_text("DIR");
  serve
      ->add_option("--trusted-problems", options->trusted_problems,
                   "a folder of the operator's own problems (a suite or a KernelBench level): known by the "
                   "same ids as their sources, judged outside the sandbox")
      ->option_text("DIR");
  serve
      ->add_option("--warm-judges", options->warm_judges,
                   "problems whose judge stays alive per device between requests (least recently used goes; "
                   "at least -j, one per evaluation in flight)")
      ->check(CLI::PositiveNumber)
      ->option_text("N")
      ->capture_default_str();
  serve->add_option("--max-completions", options->max_completions, "completions per request at most")
      ->check(CLI::PositiveNumber)
      ->option_text("N")
      ->capture_default_str();
  add_trials_option(*serve, settings.trials);
  serve->add_flag("--small", settings.small, "use the problems' KFORGE_SMALL sizes (fast CPU runs)");
  add_timeout_option(*serve, settings.timeout_s);
  add_time_budget_option(*serve, settings.timing.time_budget_s, "seconds of timing at most per evaluation");
  add_python_option(*serve, options->python);
  add_batch_options(*serve, options->batch);
  // Batch-only options: the service answers over HTTP and takes the reward per request.
  serve->remove_option(serve->get_option("--results"));
  serve->remove_option(serve->get_option("--reward"));
  return [options, serve]() { return serve->parsed() ? run_serve(*options) : -1; };
}

}  // namespace kforge::cli
