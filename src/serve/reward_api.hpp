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
// service or the job table and answers JSON; every error is {"error": {"code", "message"}}.
class RewardApi {
 public:
  RewardApi(ProblemRegistry& problems, JobTable& jobs, EvaluationService& service, ServiceMetrics& metrics,
            std::optional<std::string> token, ApiLimits limits, nlohmann::json about);

  HttpResponse handle(const HttpRequest& request);
  // Set by the server once it runs, for the in-flight gauge.
  void set_in_flight_source(std::function<std::size_t()> source);

 private:
  HttpResponse route(const HttpRequest& request, std::string& route_name);
  HttpResponse health() const;
  // Registers the source in body[field]: its id, or the error answer (400 not a non-empty string,
  // 413 too large, 500 not stored). Shared by POST /v1/problems and an inline problem_source.
  std::variant<std::string, HttpResponse> add_source(const nlohmann::json& body, const std::string& field);
  HttpResponse register_problem(const nlohmann::json& body);
  HttpResponse evaluate(const nlohmann::json& body);
  HttpResponse job(const std::string& id) const;
  HttpResponse metrics() const;
  bool authorised(const HttpRequest& request) const;

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

}  // namespace kforge::serve
