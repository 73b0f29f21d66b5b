#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include "serve/evaluation_service.hpp"
#include "serve/http_server.hpp"
#include "serve/job_table.hpp"
#include "serve/problem_registry.hpp"
#include "serve/service_metrics.hpp"

namespace kforge::serve {

struct ApiLimits {
  std::size_t max_completions = 1024;        // per evaluate request
  std::size_t max_source_bytes = 1U << 20U;  // per problem source or completion
  double max_wait_s = 3600.0;                // the longest a synchronous request may wait
};

// The /v1 HTTP API of kforge serve (docs/api.md): routes a request to the registry, the evaluation
// service or the job table and answers JSON; every error is {"error": {"code", "message"}}. Requests
// from web pages (another Origin, Sec-Fetch-Site cross-site) get 403, POST bodies that are not
// application/json 415, requests without the token 401 (docs/threat-model.md, "The reward service").
class RewardApi {
 public:
  using Clock = std::chrono::steady_clock;

  RewardApi(ProblemRegistry& problems, JobTable& jobs, EvaluationService& service, ServiceMetrics& metrics,
            std::optional<std::string> token, ApiLimits limits, nlohmann::json about);

  // Answers through `respond`: at once, or (an evaluation that waits) once the job finishes or its
  // wait_s passes, from the job table's thread; the calling thread never waits for an evaluation.
  void handle(const HttpRequest& request, const HttpResponder& respond);
  // Set by the server once it runs, for the in-flight gauge.
  void set_in_flight_source(std::function<std::size_t()> source);

 private:
  // The answer, or none when `respond` will be called later (an evaluation that waits).
  std::optional<HttpResponse> route(const HttpRequest& request, std::string& route_name,
                                    const HttpResponder& respond, Clock::time_point start);
  HttpResponse health() const;
  // Registers the source in body[field]: its id, or the error answer (400 not a non-empty string or not
  // a KernelBench problem, 413 too large, 500 not stored). Shared by POST /v1/problems and an inline
  // problem_source.
  std::variant<std::string, HttpResponse> add_source(const nlohmann::json& body, const std::string& field);
  HttpResponse register_problem(const nlohmann::json& body);
  std::optional<HttpResponse> evaluate(const nlohmann::json& body, const HttpResponder& respond,
                                       Clock::time_point start);
  // The job document: 200 when finished, 202 while it runs.
  HttpResponse job_answer(const std::string& id, bool finished) const;
  HttpResponse job(const std::string& id) const;
  HttpResponse metrics() const;
  bool authorised(const HttpRequest& request) const;
  // `respond`, recording the request's route, status and latency first.
  HttpResponder measured(std::string route_name, Clock::time_point start, HttpResponder respond);

  ProblemRegistry& problems_;
  JobTable& jobs_;
  EvaluationService& service_;
  ServiceMetrics& metrics_;
  std::optional<std::string> token_;
  ApiLimits limits_;
  nlohmann::json about_;
  std::function<std::size_t()> in_flight_;
};

HttpResponse json_response(int status, const nlohmann::json& body);
// A response whose body is JSON text already.
HttpResponse text_response(int status, std::string json_text);

}  // namespace kforge::serve
