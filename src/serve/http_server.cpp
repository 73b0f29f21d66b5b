#include "serve/http_server.hpp"

#include <fmt/format.h>

#include <utility>  // before Boost: its awaitable.hpp uses std::exchange without including it
// clang-format off
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

#include "serve/handler_pool.hpp"
#include "serve/thread_allocator_cache.hpp"

namespace kforge::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string text) {
  for (auto& c : text) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text;
}

HttpRequest to_request(const http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  const std::string target(message.target());
  const auto question = target.find('?');
  request.path = target.substr(0, question);
  request.query = question == std::string::npos ? "" : target.substr(question + 1);
  for (const auto& field : message) {
    request.headers[lower(std::string(field.name_string()))] = std::string(field.value());
  }
  request.body = message.body();
  return request;
}

// Handler threads when the options leave it open: twice the cores (handlers that wait answer later and
// hold no thread), at least 4, at most 64.
std::size_t default_handler_threads() {
  constexpr std::size_t kMin = 4;
  constexpr std::size_t kMax = 64;
  return std::clamp<std::size_t>(std::size_t{2} * std::thread::hardware_concurrency(), kMin, kMax);
}

AsyncHttpHandler answering_at_once(HttpHandler handler) {
  return [handler = std::move(handler)](const HttpRequest& request, const HttpResponder& respond) {
    respond(handler(request));
  };
}

}  // namespace

// Members are destroyed in reverse order: the io_context (and the sessions its pending operations
// hold) goes before the counters those sessions update.
struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  HttpServerOptions options;
  AsyncHttpHandler handler;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> in_flight{0};
  std::atomic<bool> stopping{false};
  std::uint16_t bound_port = 0;
  bool running = false;
  HandlerPool handlers;
  asio::io_context io;
  // Keeps the io threads alive while no socket operation is pending (a handler is running, draining).
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  tcp::acceptor acceptor{io};
  std::vector<std::thread> io_threads;

  State(HttpServerOptions server_options, AsyncHttpHandler request_handler)
      : options(std::move(server_options)),
        handler(std::move(request_handler)),
        handlers(
            options.handler_threads > 0 ? options.handler_threads : default_handler_threads(),
            options.handler_idle_release, [this] { release_idle_memory(); }, options.handler_idle_exit) {}

  // On a handler thread idle for a while: its allocator cache goes back, and when nothing is in flight,
  // the allocator's free pages too, so an idle service returns to about its starting memory.
  void release_idle_memory() const noexcept {
    release_thread_allocator_cache();
    if (in_flight == 0) {
      return_free_memory_to_system();
    }
  }

  // A request refused before a handler saw it: counted by whoever observes (never throws).
  void rejected(int status, const std::string& code) const noexcept {
    if (options.on_rejected) {
      try {
        options.on_rejected(status, code);
      } catch (...) {  // an observer's failure must not lose the answer
      }
    }
  }
};

namespace {

// One connection: read a request, run the handler on a handler thread, write the answer, repeat while
// the client keeps the connection alive. Only one operation is outstanding at a time, on a strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::State& state) : stream_(std::move(socket)), state_(state) {}
  ~Session() { --state_.connections; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;

  void start(bool refuse) {
    if (refuse) {
      reject(503, "too-many-connections", "the server is at its connection limit; retry later");
      return;
    }
    read();
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(state_.options.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(state_.options.max_header_bytes));
    stream_.expires_after(state_.options.read_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code error, std::size_t) { self->on_read(error); });
  }

  void on_read(beast::error_code error) {
    if (error == http::error::end_of_stream || error == beast::error::timeout ||
        error == asio::error::operation_aborted || error == asio::error::connection_reset ||
        error == asio::error::eof) {
      close();
      return;
    }
    if (error == http::error::body_limit) {
      reject(413, "body-too-large",
             fmt::format("the request body is larger than {} bytes", state_.options.max_body_bytes));
      return;
    }
    if (error == http::error::header_limit) {
      reject(431, "headers-too-large", "the request headers are too large");
      return;
    }
    if (error) {
      reject(400, "bad-request", "malformed HTTP request: " + error.message());
      return;
    }
    auto message = parser_->release();
    const bool keep_alive = message.keep_alive();
    stream_.expires_never();
    ++state_.in_flight;
    const bool posted =
        state_.handlers.post([self = shared_from_this(), request = to_request(message), keep_alive]() {
          const auto respond = self->responder(keep_alive);
          try {
            self->state_.handler(request, respond);
          } catch (const std::exception& failure) {
            respond(json_error(500, "internal", failure.what()));
          } catch (...) {
            respond(json_error(500, "internal", "the handler failed"));
          }
        });
    if (!posted) {  // stopping, or no thread could be started
      state_.rejected(503, "unavailable");
      send(json_error(503, "unavailable", "the server cannot take requests now; retry later"), false, true);
    }
  }

  // Answers the request once: the first call sends (on this connection's strand), later ones do nothing.
  // It may be kept past the server (a job waiter): it holds the server's state, destroyed after the
  // session (members go in reverse order), so the session never outlives what it refers to.
  HttpResponder responder(bool keep_alive) {
    struct Answer {
      std::shared_ptr<HttpServer::State> state;
      std::shared_ptr<Session> session;
      bool keep_alive;
      std::shared_ptr<std::atomic<bool>> answered;
      void operator()(HttpResponse response) const {
        if (answered->exchange(true)) {
          return;
        }
        asio::post(session->stream_.get_executor(),
                   [self = session, response = std::move(response), keep = keep_alive]() mutable {
                     self->send(std::move(response), keep, true);
                   });
      }
    };
    return Answer{state_.shared_from_this(), shared_from_this(), keep_alive,
                  std::make_shared<std::atomic<bool>>(false)};
  }

  // A request refused before any handler: counted, answered, and the connection closed.
  void reject(int status, const std::string& code, const std::string& message) {
    state_.rejected(status, code);
    send(json_error(status, code, message), false);
  }

  void send(HttpResponse response, bool keep_alive, bool handled = false) {
    auto message =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
    message->set(http::field::server, "kforge");
    message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) {
      message->set(name, value);
    }
    message->body() = std::move(response.body);
    message->keep_alive(keep_alive && !state_.stopping);
    message->prepare_payload();
    stream_.expires_after(state_.options.read_timeout);
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message, handled](beast::error_code error, std::size_t) {
                        if (handled) {
                          --self->state_.in_flight;
                        }
                        if (!error && message->keep_alive()) {
                          self->read();
                        } else {
                          self->close();
                        }
                      });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpServer::State& state_;
};

void accept_next(HttpServer::State& state) {
  state.acceptor.async_accept(
      asio::make_strand(state.io), [&state](beast::error_code error, tcp::socket socket) {
        if (!state.acceptor.is_open()) {
          return;
        }
        if (!error) {
          const bool refuse = ++state.connections > state.options.max_connections || state.stopping;
          std::make_shared<Session>(std::move(socket), state)->start(refuse);
        }
        accept_next(state);
      });
}

}  // namespace

HttpResponse json_error(int status, const std::string& code, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : state_(std::make_shared<State>(std::move(options), answering_at_once(std::move(handler)))) {}

HttpServer::HttpServer(HttpServerOptions options, AsyncHttpHandler handler)
    : state_(std::make_shared<State>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() { stop(std::chrono::milliseconds(0)); }

void HttpServer::start() {
  auto& state = *state_;
  beast::error_code error;
  const auto address = asio::ip::make_address(state.options.host, error);
  if (error) {
    throw std::runtime_error(fmt::format("cannot listen on '{}': not an IP address", state.options.host));
  }
  const tcp::endpoint endpoint(address, state.options.port);
  state.acceptor.open(endpoint.protocol(), error);
  if (!error) {
    state.acceptor.set_option(asio::socket_base::reuse_address(true), error);
  }
  if (!error) {
    state.acceptor.bind(endpoint, error);
  }
  if (!error) {
    state.acceptor.listen(asio::socket_base::max_listen_connections, error);
  }
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{}: {}", state.options.host, state.options.port, error.message()));
  }
  state.bound_port = state.acceptor.local_endpoint().port();
  accept_next(state);
  state.running = true;
  for (std::size_t i = 0; i < std::max<std::size_t>(state.options.io_threads, 1); ++i) {
    state.io_threads.emplace_back([&state]() { state.io.run(); });
  }
}

std::uint16_t HttpServer::port() const { return state_->bound_port; }

std::size_t HttpServer::in_flight() const { return state_->in_flight; }

std::size_t HttpServer::handler_threads() const { return state_->handlers.threads(); }

void HttpServer::stop(std::chrono::milliseconds drain) {
  auto& state = *state_;
  if (!state.running) {
    return;
  }
  state.running = false;
  state.stopping = true;
  asio::post(state.io, [&state]() {
    beast::error_code ignored;
    state.acceptor.close(ignored);
  });
  const auto deadline = std::chrono::steady_clock::now() + drain;
  while (state.in_flight > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  state.io.stop();
  for (auto& thread : state.io_threads) {
    thread.join();
  }
  state.handlers.join();
}

}  // namespace kforge::serve
