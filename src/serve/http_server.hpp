#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kforge::serve {

struct HttpRequest {
  std::string method;                          // GET, POST, ...
  std::string path;                            // without the query
  std::string query;                           // after '?', undecoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Sends the answer to a request; call it once, from any thread, now or later.
using HttpResponder = std::function<void(HttpResponse)>;
// A handler that may answer later (a request that waits for an evaluation): it returns at once and its
// handler thread serves other requests meanwhile.
using AsyncHttpHandler = std::function<void(const HttpRequest&, HttpResponder)>;
// Called for a request refused before any handler saw it (503 too-many-connections, 413, 431,
// malformed HTTP, 503 unavailable), with its status and error code.
using RejectionObserver = std::function<void(int status, const std::string& code)>;

// Limits that keep one hostile client from taking the service down.
struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;   // 0: any free port (see HttpServer::port)
  std::size_t io_threads = 2;  // accept, read and write
  // Threads that run handlers; requests beyond them wait in order. Handlers that wait for something
  // answer later (AsyncHttpHandler) instead of holding a thread. 0: twice the cores, 4 to 64.
  std::size_t handler_threads = 0;
  // A handler thread idle this long hands its allocator cache back; idle for `handler_idle_exit`, it
  // ends (its stack and caches go back to the system) and a new one starts when needed.
  std::chrono::milliseconds handler_idle_release{1000};
  std::chrono::milliseconds handler_idle_exit{10000};
  std::size_t max_body_bytes = 16U << 20U;
  std::size_t max_header_bytes = 64U << 10U;
  std::size_t max_connections = 512;      // beyond this a connection gets 503 at once
  std::chrono::seconds read_timeout{30};  // a request must arrive whole within this
  RejectionObserver on_rejected;          // e.g. the service's metrics; may be empty
};

// An HTTP/1.1 server (Boost.Beast) that hands each request to `handler` on a handler thread, so slow
// handlers never block reading and answering other clients. Malformed requests get 400, bodies past
// the limit 413, too many connections 503, each with a JSON error; a handler that throws gets 500.
class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  HttpServer(HttpServerOptions options, AsyncHttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  HttpServer(HttpServer&&) = delete;
  HttpServer& operator=(HttpServer&&) = delete;

  // Binds and starts listening; throws std::runtime_error naming the address when it cannot.
  void start();
  // The bound port (after start).
  std::uint16_t port() const;
  // Stops accepting, lets in-flight requests finish (up to `drain`), then stops the threads.
  void stop(std::chrono::milliseconds drain = std::chrono::seconds(30));
  // Requests being handled now (answered later ones included).
  std::size_t in_flight() const;
  // Handler threads alive now.
  std::size_t handler_threads() const;

  struct State;  // the implementation's (http_server.cpp): sockets, threads, counters

 private:
  std::shared_ptr<State> state_;
};

// {"error": {"code": ..., "message": ...}} with the status.
HttpResponse json_error(int status, const std::string& code, const std::string& message);

}  // namespace kforge::serve
