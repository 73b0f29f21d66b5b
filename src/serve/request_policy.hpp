#pragma once

#include <optional>

#include "serve/http_server.hpp"

namespace kforge::serve {

// Requests a browser may send from any web page without asking the service first (a "simple" CORS
// request: a form post, text/plain, no custom header) must not reach the API, which runs code. Two rules
// (docs/threat-model.md, "The reward service"):

// 403 `cross-origin` for a request from another origin: an Origin header that is not this service's own
// (http://HOST or https://HOST, HOST as the request's Host header says), or Sec-Fetch-Site other than
// same-origin or none. Clients that are not browsers send neither header.
std::optional<HttpResponse> refuse_cross_origin(const HttpRequest& request);

// 415 `unsupported-media-type` for a body whose Content-Type is not application/json (parameters such
// as charset are fine): a browser cannot send that cross-origin without a preflight the service never
// answers.
std::optional<HttpResponse> refuse_non_json_body(const HttpRequest& request);

}  // namespace kforge::serve
