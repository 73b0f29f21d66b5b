#include "serve/reward_api.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <variant>

#include "measure/elapsed.hpp"
#include "problem/problem_source_check.hpp"
#include "reward/reward_spec.hpp"
#include "serve/request_policy.hpp"
#include "serve/service_token.hpp"

namespace kforge::serve {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kDefaultWaitS = 600.0;

using measure::seconds_since;

std::string type_name(const nlohmann::json& value) { return value.type_name(); }

}  // namespace

HttpResponse text_response(int status, std::string json_text) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(json_text);
  return response;
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse response;
  response.status = status;
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

RewardApi::RewardApi(ProblemRegistry& problems, JobTable& jobs, EvaluationService& service,
                     ServiceMetrics& metrics, std::optional<std::string> token, ApiLimits limits,
                     nlohmann::json about)
    : problems_(problems),
      jobs_(jobs),
      service_(service),
      metrics_(metrics),
      token_(std::move(token)),
      limits_(limits),
      about_(std::move(about)),
      in_flight_([]() { return std::size_t{0}; }) {}

void RewardApi::set_in_flight_source(std::function<std::size_t()> source) { in_flight_ = std::move(source); }

void RewardApi::handle(const HttpRequest& request, const HttpResponder& respond) {
  const auto start = Clock::now();
  std::string route_name = "unknown";
  auto response = route(request, route_name, respond, start);
  if (response) {
    metrics_.request(route_name, response->status, seconds_since(start));
    respond(std::move(*response));
  }
}

HttpResponder RewardApi::measured(std::string route_name, Clock::time_point start, HttpResponder respond) {
  return
      [this, route_name = std::move(route_name), start, respond = std::move(respond)](HttpResponse response) {
        metrics_.request(route_name, response.status, seconds_since(start));
        respond(std::move(response));
      };
}

bool RewardApi::authorised(const HttpRequest& request) const {
  if (!token_) {
    return true;
  }
  const auto header = request.headers.find("authorization");
  return header != request.headers.end() && bearer_matches(header->second, *token_);
}

std::optional<HttpResponse> RewardApi::route(const HttpRequest& request, std::string& route_name,
                                             const HttpResponder& respond, Clock::time_point start) {
  const auto& path = request.path;
  const auto method_is = [&](const char* method) { return request.method == method; };
  if (auto refused = refuse_cross_origin(request)) {
    route_name = "cross-origin";
    return refused;
  }
  if (path == "/v1/health") {
    route_name = "health";
    return method_is("GET") ? health() : json_error(405, "method-not-allowed", "use GET /v1/health");
  }
  if (!authorised(request)) {
    route_name = "unauthorised";
    auto response =
        json_error(401, "unauthorised", "send the service's token as 'Authorization: Bearer TOKEN'");
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return response;
  }
  if (path == "/metrics" || path == "/v1/metrics") {
    route_name = "metrics";
    return method_is("GET") ? metrics() : json_error(405, "method-not-allowed", "use GET /metrics");
  }
  if (path.rfind("/v1/jobs/", 0) == 0) {
    route_name = "job";
    return method_is("GET") ? job(path.substr(9))
                            : json_error(405, "method-not-allowed", "use GET /v1/jobs/ID");
  }
  const bool known = path == "/v1/problems" || path == "/v1/evaluate";
  if (!known) {
    return json_error(
        404, "not-found",
        fmt::format("no route {}; the API has GET /v1/health, POST /v1/problems, POST /v1/evaluate, "
                    "GET /v1/jobs/ID and GET /metrics (docs/api.md)",
                    path.substr(0, 200)));
  }
  route_name = path == "/v1/problems" ? "problems" : "evaluate";
  if (!method_is("POST")) {
    return json_error(405, "method-not-allowed", "use POST " + path);
  }
  if (auto refused = refuse_non_json_body(request)) {
    return refused;
  }
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return json_error(400, "bad-json", "the request body must be a JSON object");
  }
  if (path == "/v1/problems") {
    return register_problem(body);
  }
  return evaluate(body, respond, start);
}

HttpResponse RewardApi::health() const {
  auto document = about_;
  document["status"] = service_.draining() ? "draining" : "ok";
  document["problems"] = problems_.size();
  const auto engine = service_.counters();
  document["queue_depth"] = engine.queued;
  document["evaluations_running"] = engine.running;
  document["jobs_running"] = jobs_.running();
  return json_response(service_.draining() ? 503 : 200, document);
}

std::variant<std::string, HttpResponse> RewardApi::add_source(const nlohmann::json& body,
                                                              const std::string& field) {
  const auto source = body.find(field);
  if (source == body.end() || !source->is_string() || source->get_ref<const std::string&>().empty()) {
    return json_error(400, "bad-request",
                      fmt::format("'{}' must be the problem's Python source (a non-empty string)", field));
  }
  if (source->get_ref<const std::string&>().size() > limits_.max_source_bytes) {
    return json_error(413, "source-too-large",
                      fmt::format("a problem source is at most {} bytes", limits_.max_source_bytes));
  }
  const auto& text = source->get_ref<const std::string&>();
  if (auto id = ProblemRegistry::id_of(text); problems_.find(id)) {
    return id;  // known already (a client that sends its problem with every request): checked then
  }
  if (const auto defect = problem::kernelbench_problem_defect(text)) {
    return json_error(400, "bad-problem",
                      fmt::format("'{}' is not a KernelBench problem: {}", field, *defect));
  }
  try {
    return problems_.add(source->get<std::string>());
  } catch (const std::exception& error) {
    return json_error(500, "store-failed", error.what());
  }
}

HttpResponse RewardApi::register_problem(const nlohmann::json& body) {
  auto added = add_source(body, "source");
  if (auto* error = std::get_if<HttpResponse>(&added)) {
    return std::move(*error);
  }
  return json_response(200, {{"problem_id", std::get<std::string>(added)}});
}

std::optional<HttpResponse> RewardApi::evaluate(const nlohmann::json& body, const HttpResponder& respond,
                                                Clock::time_point start) {
  EvaluationRequest request;
  nlohmann::json info = nlohmann::json::object();
  if (const auto id = body.find("problem_id"); id != body.end()) {
    if (!id->is_string()) {
      return json_error(400, "bad-request", "'problem_id' must be a string from POST /v1/problems");
    }
    const auto found = problems_.find(id->get<std::string>());
    if (!found) {
      return json_error(404, "unknown-problem",
                        fmt::format("no problem '{}': register its source with POST /v1/problems first",
                                    id->get<std::string>().substr(0, 100)));
    }
    request.problem = found->path;
    request.problem_trusted = found->trusted;
    info["problem_id"] = *id;
  } else if (body.contains("problem_source")) {
    auto added = add_source(body, "problem_source");
    if (auto* error = std::get_if<HttpResponse>(&added)) {
      return std::move(*error);
    }
    const auto& problem_id = std::get<std::string>(added);
    const auto found = problems_.find(problem_id);
    request.problem = found->path;
    request.problem_trusted = found->trusted;
    info["problem_id"] = problem_id;
  } else {
    return json_error(400, "bad-request", "give 'problem_id' (from POST /v1/problems) or 'problem_source'");
  }
  const auto completions = body.find("completions");
  if (completions == body.end() || !completions->is_array() || completions->empty()) {
    return json_error(400, "bad-request", "'completions' must be a non-empty list of strings");
  }
  if (completions->size() > limits_.max_completions) {
    return json_error(413, "too-many-completions",
                      fmt::format("at most {} completions per request", limits_.max_completions));
  }
  for (const auto& completion : *completions) {
    if (!completion.is_string()) {
      return json_error(400, "bad-request",
                        "every completion must be a string, got " + type_name(completion));
    }
    request.completions.push_back(completion.get<std::string>());
  }
  // A completion over the limit is the policy's answer, so it gets a rejection (candidate-too-large),
  // not an error that would fail the whole request.
  request.max_completion_bytes = limits_.max_source_bytes;
  try {
    request.reward = reward::parse_reward_spec(body.value("reward", nlohmann::json(nullptr)));
  } catch (const std::invalid_argument& error) {
    return json_error(400, "bad-reward", error.what());
  }
  if (const auto verdict = body.find("include_verdict"); verdict != body.end()) {
    if (!verdict->is_boolean()) {
      return json_error(400, "bad-request", "'include_verdict' must be true or false");
    }
    request.include_verdict = verdict->get<bool>();
  }
  double wait_s = kDefaultWaitS;
  if (const auto wait = body.find("wait_s"); wait != body.end()) {
    if (!wait->is_number() || !std::isfinite(wait->get<double>()) || wait->get<double>() < 0) {
      return json_error(400, "bad-request",
                        "'wait_s' must be a number of seconds >= 0 (0: answer at once with a job id)");
    }
    wait_s = std::min(wait->get<double>(), limits_.max_wait_s);
  }
  info["reward"] = reward::to_json(request.reward);
  std::string id;
  try {
    id = service_.submit(request, info);
  } catch (const std::runtime_error& error) {
    return json_error(503, "shutting-down", error.what());
  }
  if (wait_s <= 0) {
    return job_answer(id, false);
  }
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
  jobs_.when_finished(id, deadline, [this, id, answer = measured("evaluate", start, respond)](bool finished) {
    answer(job_answer(id, finished));
  });
  return std::nullopt;
}

HttpResponse RewardApi::job_answer(const std::string& id, bool finished) const {
  auto document = jobs_.document(id, finished);
  if (!document) {
    return json_error(500, "job-lost",
                      "the job finished but its results were evicted; fetch them again by re-sending");
  }
  return text_response(finished ? 200 : 202, std::move(*document));
}

HttpResponse RewardApi::job(const std::string& id) const {
  auto document = jobs_.document(id, true);
  if (!document) {
    return json_error(404, "unknown-job",
                      "no job with this id (finished jobs are kept for a while; the result "
                      "store answers the same request again at once)");
  }
  return text_response(200, std::move(*document));
}

HttpResponse RewardApi::metrics() const {
  HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = metrics_.render(service_.counters(), jobs_.running(), in_flight_());
  return response;
}

}  // namespace kforge::serve
