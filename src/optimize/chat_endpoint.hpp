#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "optimize/chat_sampler.hpp"

namespace kforge::optimize {

// An OpenAI-compatible chat-completions endpoint (vLLM, SGLang, llama.cpp's server, a hosted API).
struct ChatEndpoint {
  std::string url;                             // the API base (".../v1") or the full ".../chat/completions"
  std::string model;                           // the "model" field of each request
  std::string api_key_env = "OPENAI_API_KEY";  // the variable holding the key; unset: no Authorization
  double temperature = 0.7;
  int max_tokens = 8192;
  double timeout_s = 600;  // per request; a failed request is retried twice
};

// A sampler that asks the endpoint through `python -m kforge.worker.chat_client` (TLS and proxies from
// Python's standard library; the key is read from the environment there and never written to a file or
// a command line). Each sample is one request, the n of a call run in parallel. A worker that fails,
// hangs past its deadline or writes nothing gives n replies that say why.
ChatSampler chat_endpoint_sampler(const ChatEndpoint& endpoint,
                                  const std::optional<std::filesystem::path>& python);

}  // namespace kforge::optimize
