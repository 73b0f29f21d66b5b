#include "optimize/chat_endpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"
#include "source/text_file.hpp"

namespace kforge::optimize {
namespace {

namespace fs = std::filesystem;

constexpr int kAttemptsPerRequest = 3;  // the worker retries a failed request twice (chat_client.py)
constexpr double kBackoffAllowanceS = 30;

// What the client needs of the caller's environment to reach the endpoint: the key, proxies, CA files.
constexpr std::array kNetworkVariables{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY",    "http_proxy",
                                       "NO_PROXY",    "no_proxy",    "SSL_CERT_FILE", "SSL_CERT_DIR"};

void pass_variable(runner::WorkerLaunch& launch, const std::string& name) {
  const char* value = std::getenv(name.c_str());
  const bool present = std::any_of(launch.environment.begin(), launch.environment.end(),
                                   [&](const auto& entry) { return entry.first == name; });
  if (value != nullptr && !present) {
    launch.environment.emplace_back(name, value);
  }
}

std::vector<ChatReply> failed(int n, const std::string& why) {
  return std::vector<ChatReply>(static_cast<std::size_t>(std::max(0, n)), ChatReply{"", why});
}

std::vector<ChatReply> replies_from(const fs::path& path, int n) {
  const auto document = nlohmann::json::parse(source::read_text_file(path));
  std::vector<ChatReply> replies;
  for (const auto& entry : document.at("replies")) {
    replies.push_back({entry.value("text", ""), entry.value("error", "")});
  }
  replies.resize(static_cast<std::size_t>(n), ChatReply{"", "the chat client returned fewer replies"});
  return replies;
}

std::vector<ChatReply> sample_through_worker(const ChatEndpoint& endpoint,
                                             const runner::PythonEnvironment& python,
                                             const std::vector<ChatMessage>& messages, int n) {
  if (n <= 0) {
    return {};
  }
  const auto scratch = runner::ScratchSpace::create();
  const auto request = scratch.directory() / "chat-request.json";
  const auto reply = scratch.directory() / "chat-replies.json";
  nlohmann::json body_messages = nlohmann::json::array();
  for (const auto& message : messages) {
    body_messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  std::ofstream(request) << nlohmann::json{
      {"url", endpoint.url},
      {"model", endpoint.model},
      {"api_key_env", endpoint.api_key_env},
      {"messages", body_messages},
      {"n", n},
      {"temperature", endpoint.temperature},
      {"max_tokens", endpoint.max_tokens},
      {"timeout_s",
       endpoint.timeout_s}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto launch = runner::make_program_launch("chat_client", python, scratch.directory(), {},
                                            {"--request", request.string(), "--out", reply.string()});
  pass_variable(launch, endpoint.api_key_env);
  for (const char* name : kNetworkVariables) {
    pass_variable(launch, name);
  }
  auto process = runner::WorkerProcess::start(launch);
  const auto deadline_s = endpoint.timeout_s * kAttemptsPerRequest + kBackoffAllowanceS;
  const auto ended = process.run_to_exit(std::chrono::milliseconds(static_cast<long>(deadline_s * 1000)));
  std::error_code error;
  if (!fs::exists(reply, error)) {
    const auto log = process.log_tail();
    return failed(n, fmt::format("the chat client {}: {}", ended.message,
                                 log.size() > 400 ? log.substr(log.size() - 400) : log));
  }
  try {
    return replies_from(reply, n);
  } catch (const std::exception& failure) {
    return failed(n, fmt::format("the chat client's replies cannot be read: {}", failure.what()));
  }
}

}  // namespace

ChatSampler chat_endpoint_sampler(const ChatEndpoint& endpoint,
                                  const std::optional<std::filesystem::path>& python) {
  return [endpoint, environment = runner::find_python_environment(python)](
             const std::vector<ChatMessage>& messages, int n) {
    try {
      return sample_through_worker(endpoint, environment, messages, n);
    } catch (const std::exception& failure) {
      return failed(n, fmt::format("the chat client could not run: {}", failure.what()));
    }
  };
}

}  // namespace kforge::optimize
