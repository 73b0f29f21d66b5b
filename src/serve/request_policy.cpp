#include "serve/request_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace kforge::serve {
namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

const std::string* header(const HttpRequest& request, const char* name) {
  const auto found = request.headers.find(name);
  return found == request.headers.end() ? nullptr : &found->second;
}

// Printable for a message: at most 100 characters, nothing but ASCII.
std::string shown(std::string_view text) {
  std::string result;
  for (const char c : text.substr(0, 100)) {
    result += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?';
  }
  return result;
}

}  // namespace

std::optional<HttpResponse> refuse_cross_origin(const HttpRequest& request) {
  if (const auto* site = header(request, "sec-fetch-site")) {
    const auto value = lower(trimmed(*site));
    if (value != "same-origin" && value != "none") {
      return json_error(403, "cross-origin",
                        fmt::format("requests from other sites are refused (Sec-Fetch-Site: {}); call the "
                                    "service from a program, not from a web page",
                                    shown(value)));
    }
  }
  const auto* origin = header(request, "origin");
  if (origin == nullptr) {
    return std::nullopt;
  }
  const auto* host = header(request, "host");
  const auto value = lower(trimmed(*origin));
  if (host != nullptr && !trimmed(*host).empty()) {
    const auto own = lower(trimmed(*host));
    if (value == "http://" + own || value == "https://" + own) {
      return std::nullopt;
    }
  }
  return json_error(
      403, "cross-origin",
      fmt::format("requests from another origin are refused (Origin: {}); call the service from "
                  "a program, not from a web page",
                  shown(value)));
}

std::optional<HttpResponse> refuse_non_json_body(const HttpRequest& request) {
  const auto* type = header(request, "content-type");
  const auto media =
      type == nullptr ? std::string() : lower(trimmed(std::string_view(*type).substr(0, type->find(';'))));
  if (media == "application/json") {
    return std::nullopt;
  }
  return json_error(415, "unsupported-media-type",
                    fmt::format("send the body as JSON with 'Content-Type: application/json' (got {})",
                                type == nullptr ? "no Content-Type" : "'" + shown(*type) + "'"));
}

}  // namespace kforge::serve
