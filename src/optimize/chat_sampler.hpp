#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kforge::optimize {

// One message of an OpenAI-style chat.
struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

// One sampled reply, or why there is none.
struct ChatReply {
  std::string text;
  std::string error;  // non-empty when this sample failed (endpoint down, HTTP error, malformed reply)
};

// Samples `n` replies to the same messages (in parallel where the endpoint allows); always n entries.
using ChatSampler = std::function<std::vector<ChatReply>(const std::vector<ChatMessage>& messages, int n)>;

}  // namespace kforge::optimize
