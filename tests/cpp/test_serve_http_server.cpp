#include <gtest/gtest.h>

#include <utility>  // before Boost: its awaitable.hpp uses std::exchange without including it
// clang-format off
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on
#include <chrono>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_server.hpp"

namespace kforge::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpResponse echo(const HttpRequest& request) {
  if (request.path == "/throw") {
    throw std::runtime_error("boom");
  }
  if (request.path == "/slow") {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  HttpResponse response;
  response.body =
      nlohmann::json{{"method", request.method},
                     {"path", request.path},
                     {"query", request.query},
                     {"body", request.body},
                     {"agent", request.headers.count("user-agent") ? request.headers.at("user-agent") : ""}}
          .dump();
  return response;
}

struct Server {
  explicit Server(HttpServerOptions options = {}) : server(with_any_port(std::move(options)), echo) {
    server.start();
  }
  static HttpServerOptions with_any_port(HttpServerOptions options) {
    options.port = 0;
    return options;
  }
  HttpServer server;
};

// Sends raw bytes, returns everything the server answered before closing (or the first response).
std::string raw_exchange(std::uint16_t port, const std::string& bytes) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(bytes));
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  beast::error_code error;
  http::read(socket, buffer, response, error);
  return error ? "read error: " + error.message()
               : std::to_string(response.result_int()) + " " + response.body();
}

http::response<http::string_body> request(tcp::socket& socket, http::verb verb, const std::string& target,
                                          const std::string& body = "") {
  http::request<http::string_body> message(verb, target, 11);
  message.set(http::field::host, "localhost");
  message.set(http::field::user_agent, "test");
  message.body() = body;
  message.prepare_payload();
  http::write(socket, message);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return response;
}

TEST(HttpServer, AnswersRequestsAndKeepsTheConnectionAlive) {
  Server fixture;
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), fixture.server.port()));
  const auto first = request(socket, http::verb::post, "/v1/echo?x=1", "hello");
  ASSERT_EQ(first.result_int(), 200);
  const auto body = nlohmann::json::parse(first.body());
  EXPECT_EQ(body["method"], "POST");
  EXPECT_EQ(body["path"], "/v1/echo");
  EXPECT_EQ(body["query"], "x=1");
  EXPECT_EQ(body["body"], "hello");
  EXPECT_EQ(body["agent"], "test");
  const auto second = request(socket, http::verb::get, "/again");
  EXPECT_EQ(nlohmann::json::parse(second.body())["path"], "/again") << "same connection, second request";
}

TEST(HttpServer, MalformedOversizedAndFailingRequestsGetJsonErrors) {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  Server fixture(options);
  const auto port = fixture.server.port();
  const auto garbage = raw_exchange(port, "THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(garbage.substr(0, 4), "400 ");
  EXPECT_NE(garbage.find("bad-request"), std::string::npos);
  const auto huge = raw_exchange(
      port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + std::string(2048, 'a'));
  EXPECT_EQ(huge.substr(0, 4), "413 ");
  EXPECT_NE(huge.find("body-too-large"), std::string::npos);
  const auto thrown = raw_exchange(port, "GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(thrown.substr(0, 4), "500 ");
  EXPECT_NE(thrown.find("boom"), std::string::npos);
}

TEST(HttpServer, ConnectionsPastTheLimitAreRefusedWith503) {
  HttpServerOptions options;
  options.max_connections = 1;
  Server fixture(options);
  asio::io_context io;
  tcp::socket held(io);
  held.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), fixture.server.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server has accepted the first
  const auto refused = raw_exchange(fixture.server.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(refused.substr(0, 4), "503 ");
}

TEST(HttpServer, StopLetsAnInFlightRequestFinish) {
  Server fixture;
  const auto port = fixture.server.port();
  auto slow = std::async(std::launch::async,
                         [port]() { return raw_exchange(port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(fixture.server.in_flight(), 1U);
  fixture.server.stop(std::chrono::seconds(5));
  EXPECT_EQ(slow.get().substr(0, 4), "200 ");
}

TEST(HttpServer, RequestsThatWaitHoldNoThreadAndNeverHoldUpAnotherRequest) {
  // Handlers that wait (as /v1/evaluate waits for its evaluation) answer later: 40 of them on a pool of
  // two threads must still leave room for a request that does not wait, and all are answered.
  std::mutex mutex;
  std::vector<HttpResponder> waiting_answers;
  HttpServerOptions options;
  options.port = 0;
  options.max_connections = 64;
  options.handler_threads = 2;
  HttpServer server(options, [&](const HttpRequest& request, const HttpResponder& respond) {
    if (request.path == "/wait") {
      const std::lock_guard lock(mutex);
      waiting_answers.push_back(respond);
      return;
    }
    respond(HttpResponse{});
  });
  server.start();
  const auto port = server.port();
  constexpr std::size_t kWaiting = 40;
  std::vector<std::future<std::string>> waiting;
  for (std::size_t i = 0; i < kWaiting; ++i) {
    waiting.push_back(std::async(std::launch::async, [port]() {
      return raw_exchange(port, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
    }));
  }
  const auto waiters = [&] {
    const std::lock_guard lock(mutex);
    return waiting_answers.size();
  };
  for (int spin = 0; spin < 1000 && waiters() < kWaiting; ++spin) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(waiters(), kWaiting) << "every waiting request reached its handler";
  EXPECT_EQ(server.in_flight(), kWaiting);
  EXPECT_LE(server.handler_threads(), 2U);
  auto other = std::async(std::launch::async,
                          [port]() { return raw_exchange(port, "GET /now HTTP/1.1\r\nHost: x\r\n\r\n"); });
  const bool answered = other.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  {
    const std::lock_guard lock(mutex);
    for (auto& answer : waiting_answers) {
      answer(HttpResponse{});
      answer(json_error(500, "twice", "a second answer is ignored"));
    }
  }
  EXPECT_TRUE(answered) << "a request that does not wait was held up by those that do";
  EXPECT_EQ(other.get().substr(0, 4), "200 ");
  for (auto& request : waiting) {
    EXPECT_EQ(request.get().substr(0, 4), "200 ");
  }
}

TEST(HttpServer, RejectionsBeforeAnyHandlerAreReported) {
  std::mutex mutex;
  std::vector<std::pair<int, std::string>> seen;
  HttpServerOptions options;
  options.port = 0;
  options.max_body_bytes = 1024;
  options.on_rejected = [&](int status, const std::string& code) {
    const std::lock_guard lock(mutex);
    seen.emplace_back(status, code);
  };
  HttpServer server(options, echo);
  server.start();
  const auto port = server.port();
  EXPECT_EQ(raw_exchange(port, "THIS IS NOT HTTP\r\n\r\n").substr(0, 4), "400 ");
  EXPECT_EQ(raw_exchange(
                port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + std::string(2048, 'a'))
                .substr(0, 4),
            "413 ");
  EXPECT_EQ(raw_exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n").substr(0, 4), "200 ") << "not counted";
  options.max_connections = 1;
  HttpServer full(options, echo);
  full.start();
  asio::io_context io;
  tcp::socket held(io);
  held.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), full.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server has accepted it
  EXPECT_EQ(raw_exchange(full.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n").substr(0, 4), "503 ");
  const std::lock_guard lock(mutex);
  const std::vector<std::pair<int, std::string>> expected = {
      {400, "bad-request"}, {413, "body-too-large"}, {503, "too-many-connections"}};
  EXPECT_EQ(seen, expected);
}

TEST(HttpServer, ABadAddressIsAClearError) {
  HttpServerOptions options;
  options.host = "not-an-address";
  HttpServer server(options, echo);
  try {
    server.start();
    FAIL() << "start must throw";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("not-an-address"), std::string::npos);
  }
}

}  // namespace
}  // namespace kforge::serve
