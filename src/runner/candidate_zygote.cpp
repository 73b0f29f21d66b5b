#include "runner/candidate_zygote.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/sandbox.hpp"
#include "runner/worker_launch.hpp"

namespace kforge::runner {
namespace {

constexpr auto kForkTimeout = std::chrono::seconds(60);
constexpr auto kStartTimeout = std::chrono::seconds(300);  // importing torch on a cold file cache

// The three pipes of one candidate; kforge keeps one end of each, the candidate gets the other.
struct CandidatePipes {
  std::array<int, 2> requests{-1, -1};
  std::array<int, 2> replies{-1, -1};
  std::array<int, 2> log{-1, -1};

  CandidatePipes() {
    for (auto* pipe : {&requests, &replies, &log}) {
      if (pipe2(pipe->data(), O_CLOEXEC) != 0) {
        const int error = errno;
        close_all();
        throw std::runtime_error(fmt::format("cannot create a pipe: {}", std::strerror(error)));
      }
    }
  }
  CandidatePipes(const CandidatePipes&) = delete;
  CandidatePipes& operator=(const CandidatePipes&) = delete;
  CandidatePipes(CandidatePipes&&) = delete;
  CandidatePipes& operator=(CandidatePipes&&) = delete;
  ~CandidatePipes() { close_all(); }

  std::vector<int> child_ends() const { return {requests[0], replies[1], log[1]}; }
  void close_child_ends() {
    for (int* fd : {requests.data(), &replies[1], &log[1]}) {
      close_one(*fd);
    }
  }
  // Hands kforge's ends to the caller: the pipes no longer close them.
  std::array<int, 3> release_parent_ends() {
    return {std::exchange(requests[1], -1), std::exchange(replies[0], -1), std::exchange(log[0], -1)};
  }

 private:
  static void close_one(int& fd) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
  void close_all() {
    for (auto* pipe : {&requests, &replies, &log}) {
      close_one((*pipe)[0]);
      close_one((*pipe)[1]);
    }
  }
};

std::string hex_of(const std::vector<sock_filter>& program) {
  std::vector<unsigned char> bytes(program.size() * sizeof(sock_filter));
  std::memcpy(bytes.data(), program.data(), bytes.size());  // the kernel's raw BPF instructions
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    text += fmt::format("{:02x}", byte);
  }
  return text;
}

nlohmann::json environment_pairs(const WorkerLaunch& launch) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& [name, value] : launch.environment) {
    pairs.push_back({name, value});
  }
  return pairs;
}

// The zygote's reply says how each layer went in the child: 0, or the errno of the failed call.
int layer_error(const nlohmann::json& reply, const char* key) {
  const auto found = reply.find(key);
  return found != reply.end() && found->is_number_integer() ? found->get<int>() : 0;
}

std::string failure_text(const WorkerReply& reply) {
  if (const auto* failure = std::get_if<WorkerFailure>(&reply)) {
    return failure->message;
  }
  const auto& body = std::get<nlohmann::json>(reply);
  if (body.value("ok", false)) {
    return {};
  }
  const auto error = body.value("error", nlohmann::json::object());
  return error.value("message", std::string("the zygote refused the request"));
}

}  // namespace

std::unique_ptr<CandidateZygote> CandidateZygote::start(const PythonEnvironment& python, bool cpu_device,
                                                        double call_timeout_s) {
  // Candidates are re-parented here when the zygote's intermediate child exits, so kforge reaps them.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    throw std::runtime_error(fmt::format("cannot become a child subreaper: {}", std::strerror(errno)));
  }
  ScratchSpace scratch = ScratchSpace::create();
  auto launch =
      make_candidate_launch(python, scratch.directory(), cpu_device,
                            CandidateSandboxContext{{}, call_timeout_s, {}, scratch.transfer_directory()});
  launch.arguments.back() = "kforge.worker.zygote";
  launch.socket_channel = true;
  // The zygote runs only kforge's code and speaks its own protocol on the socket; each candidate it forks
  // gets a hidden, sealed reply channel of its own (the fork request names the descriptor).
  launch.hidden_reply_channel = false;
  if (launch.sandbox) {
    // Each candidate installs seccomp itself (it still needs setpgid and Landlock's calls before that),
    // and narrows these folders to its own; /proc is narrowed to the candidate's own /proc/<pid>.
    launch.sandbox->disabled_layers.insert(kLayerSeccomp);
    launch.sandbox->read_write_paths.push_back(scratch.directory());
    launch.sandbox->read_write_paths.emplace_back("/proc");
    // Every evaluation's transfer folder lies in its problem session's, which a sandboxed judge may write.
    launch.sandbox->read_write_paths.push_back(ScratchSpace::transfer_parent());
  }
  auto zygote = WorkerProcess::start(launch);
  const auto ready = zygote.call({{"op", "ready"}}, kStartTimeout);
  if (const auto problem = failure_text(ready); !problem.empty()) {
    throw std::runtime_error(
        fmt::format("the candidate zygote did not start: {}\n{}", problem, zygote.log_tail()));
  }
  return std::unique_ptr<CandidateZygote>(
      new CandidateZygote(python, cpu_device, std::move(scratch), std::move(zygote), false));
}

std::unique_ptr<CandidateZygote> CandidateZygote::start_trusted(const PythonEnvironment& python,
                                                                bool cpu_device) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    throw std::runtime_error(fmt::format("cannot become a child subreaper: {}", std::strerror(errno)));
  }
  ScratchSpace scratch = ScratchSpace::create();
  auto launch = make_program_launch("zygote", python, scratch.directory(), {}, {});
  launch.socket_channel = true;
  if (cpu_device) {
    set_visible_gpus(launch, "");
  }
  auto zygote = WorkerProcess::start(launch);
  const auto ready = zygote.call({{"op", "ready"}}, kStartTimeout);
  if (const auto problem = failure_text(ready); !problem.empty()) {
    throw std::runtime_error(
        fmt::format("the trusted program zygote did not start: {}\n{}", problem, zygote.log_tail()));
  }
  return std::unique_ptr<CandidateZygote>(
      new CandidateZygote(python, cpu_device, std::move(scratch), std::move(zygote), true));
}

CandidateZygote::CandidateZygote(PythonEnvironment python, bool cpu_device, ScratchSpace scratch,
                                 WorkerProcess zygote, bool trusted)
    : python_(std::move(python)),
      cpu_device_(cpu_device),
      scratch_(std::move(scratch)),
      zygote_(std::move(zygote)),
      trusted_(trusted) {}

CandidateZygote::~CandidateZygote() { zygote_.stop(); }

ScratchSpace CandidateZygote::new_scratch(const std::filesystem::path& transfer_parent) const {
  return ScratchSpace::create_under(scratch_.directory(), transfer_parent);
}

bool CandidateZygote::lost() const {
  const std::lock_guard lock(mutex_);
  return lost_;
}

pid_t CandidateZygote::pid() const { return zygote_.pid(); }

WorkerProcess CandidateZygote::fork_candidate(const ScratchSpace& scratch, CandidateSandboxContext context) {
  if (trusted_) {
    throw std::invalid_argument("a trusted zygote forks no candidates");
  }
  context.protected_pids.push_back(zygote_.pid());
  return fork_launch(make_candidate_launch(python_, scratch.directory(), cpu_device_, context),
                     nlohmann::json::object());
}

WorkerProcess CandidateZygote::fork_program(const WorkerLaunch& launch) {
  if (launch.sandbox.has_value() == trusted_) {
    throw std::invalid_argument(trusted_ ? "a trusted zygote forks no sandboxed program"
                                         : "a sandboxed zygote forks sandboxed programs only");
  }
  // `python -X faulthandler -m kforge.worker.MODULE ARGUMENTS...`: the module's name and its arguments.
  const auto module = std::find(launch.arguments.begin(), launch.arguments.end(), "-m");
  if (module == launch.arguments.end() || std::next(module) == launch.arguments.end()) {
    throw std::invalid_argument("a program launch runs a module (-m kforge.worker.NAME)");
  }
  std::string name = *std::next(module);
  constexpr std::string_view kPackage = "kforge.worker.";
  if (name.starts_with(kPackage)) {
    name = name.substr(kPackage.size());
  }
  return fork_launch(launch,
                     {{"program",
                       {{"module", name},
                        {"argv", std::vector<std::string>(std::next(module, 2), launch.arguments.end())}}}});
}

void CandidateZygote::preload_for(const std::string& code) {
  const std::lock_guard lock(mutex_);
  if (inductor_loaded_ || lost_ || code.find("torch._inductor") == std::string::npos) {
    return;
  }
  inductor_loaded_ = true;
  const auto reply = zygote_.call({{"op", "preload"}, {"modules", {"torch._inductor"}}}, kStartTimeout);
  if (std::holds_alternative<WorkerFailure>(reply) || !zygote_.running()) {
    lost_ = true;
  }
}

WorkerProcess CandidateZygote::fork_launch(const WorkerLaunch& launch, const nlohmann::json& extra) {
  const std::lock_guard lock(mutex_);
  if (lost_ || !zygote_.running()) {
    lost_ = true;
    throw std::runtime_error("the candidate zygote is gone");
  }
  std::optional<PreparedSandbox> sandbox;
  if (launch.sandbox) {
    sandbox.emplace(PreparedSandbox::prepare(*launch.sandbox, KernelSupport::detect()));
  }
  CandidatePipes pipes;
  std::vector<int> fds = pipes.child_ends();
  const int hidden_reply_fd = launch.hidden_reply_channel ? WorkerProcess::choose_hidden_reply_fd() : -1;
  nlohmann::json request = {{"op", "fork"},
                            {"environment", environment_pairs(launch)},
                            {"working_directory", launch.working_directory.string()},
                            {"reply_fd", hidden_reply_fd}};
  request.update(extra);
  if (sandbox && sandbox->landlock() != nullptr) {
    fds.push_back(sandbox->landlock()->fd());
    request["landlock_proc_rights"] = sandbox->landlock()->own_proc_rights();
  }
  if (sandbox && sandbox->seccomp() != nullptr) {
    request["seccomp_program"] = hex_of(sandbox->seccomp()->program());
  }
  const auto reply = zygote_.call_passing(request, fds, kForkTimeout);
  pipes.close_child_ends();
  const auto problem = failure_text(reply);
  if (std::holds_alternative<WorkerFailure>(reply) || !zygote_.running()) {
    lost_ = true;
    throw std::runtime_error(
        fmt::format("the candidate zygote died while forking: {}\n{}", problem, zygote_.log_tail()));
  }
  const auto& body = std::get<nlohmann::json>(reply);
  const pid_t pid = body.value("pid", -1);
  if (!problem.empty()) {
    if (pid > 0) {  // it exited during its set-up and was re-parented here: collect it
      WorkerProcess::adopt(pid, -1, -1, -1, nullptr, std::nullopt).stop();
    }
    throw std::runtime_error("the candidate zygote could not start a candidate: " + problem);
  }
  if (pid <= 0) {
    lost_ = true;
    throw std::runtime_error("the candidate zygote sent no process id for the candidate it forked");
  }
  const auto [request_fd, reply_fd, log_fd] = pipes.release_parent_ends();
  nlohmann::json status;
  SandboxReport report = zygote_.sandbox_report();  // namespaces, limits, capabilities: inherited
  report.landlock_applied = false;
  report.seccomp_applied = false;
  if (sandbox) {
    sandbox->record_child_layers(report, layer_error(body, "landlock_error"),
                                 layer_error(body, "seccomp_error"));
    status = sandbox->status(report);
    status["layers"]["environment"] = environment_summary(launch);
    status["started"] = "forked by the candidate zygote";
  }
  auto candidate = WorkerProcess::adopt(pid, request_fd, reply_fd, log_fd, std::move(status),
                                        sandbox ? sandbox->memory_limit() : std::nullopt, hidden_reply_fd);
  if (sandbox) {
    if (auto failure = sandbox->failure(report)) {
      candidate.stop();  // it has read no request yet: no candidate code ran
      throw std::runtime_error(*failure);
    }
  }
  return candidate;
}

}  // namespace kforge::runner
