#include "runner/program_runner.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "runner/worker_launch.hpp"

namespace kforge::runner {
namespace {

constexpr int kZygoteStarts = 3;  // a zygote that keeps dying is given up on: programs start fresh

// The entry of CUDA_VISIBLE_DEVICES at `index` when the user set one (--gpus counts the GPUs kforge sees).
std::string physical_gpu(int index) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only use of the environment kforge started with
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr || *visible == '\0') {
    return std::to_string(index);
  }
  std::stringstream list(visible);
  std::string entry;
  for (int i = 0; std::getline(list, entry, ','); ++i) {
    if (i == index) {
      return entry;
    }
  }
  return std::to_string(index);
}

// The launch's view of the GPUs: only `device`'s (as CUDA device 0), none for the CPU.
void pin_to_device(WorkerLaunch& launch, const std::string& device) {
  if (device.rfind("cuda", 0) != 0) {
    set_visible_gpus(launch, "");
    return;
  }
  const auto colon = device.find(':');
  set_visible_gpus(launch,
                   physical_gpu(colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1))));
}

ProgramRun run_attached(WorkerProcess process, const std::filesystem::path& result, double timeout_s,
                        ProgramPause* pause) {
  if (pause == nullptr) {
    return run_program(std::move(process), result, timeout_s);
  }
  pause->attach(process.pid());
  auto run = run_program(std::move(process), result, timeout_s);
  pause->detach();
  return run;
}

}  // namespace

ProgramRunner::ProgramRunner(PythonEnvironment python, std::string device, bool warm)
    : python_(std::move(python)), device_(std::move(device)), warm_(warm) {}

ProgramRunner::~ProgramRunner() = default;

std::shared_ptr<CandidateZygote> ProgramRunner::zygote(Slot& slot, bool trusted) {
  if (!warm_) {
    return nullptr;
  }
  const std::lock_guard lock(slot.mutex);
  if (slot.zygote && !slot.zygote->lost()) {
    return slot.zygote;
  }
  if (slot.starts >= kZygoteStarts) {
    return nullptr;
  }
  ++slot.starts;
  const bool cpu = device_ == "cpu";
  try {
    // Forked by the lasting thread: the thread asking may exit while the others still fork from it.
    slot.zygote = starter_.run([&] {
      return trusted ? CandidateZygote::start_trusted(python_, cpu)
                     : CandidateZygote::start(python_, cpu, 300.0);
    });
  } catch (const std::exception&) {
    slot.zygote.reset();  // programs start fresh; a real sandbox problem shows in their own runs
    slot.starts = kZygoteStarts;
  }
  return slot.zygote;
}

ProgramRun ProgramRunner::run(WorkerLaunch launch, const std::shared_ptr<CandidateZygote>& warm,
                              const std::filesystem::path& result, double timeout_s, ProgramPause* pause) {
  pin_to_device(launch, device_);
  if (warm && !warm->lost()) {
    try {
      auto process = warm->fork_program(launch);
      {
        const std::lock_guard lock(counts_mutex_);
        ++forked_;
      }
      return run_attached(std::move(process), result, timeout_s, pause);
    } catch (const std::invalid_argument&) {
      throw;                               // kforge's own mistake: a launch that does not fit the zygote
    } catch (const std::runtime_error&) {  // the zygote was lost: this program starts fresh
    }
  }
  {
    const std::lock_guard lock(counts_mutex_);
    ++fresh_;
  }
  return run_attached(WorkerProcess::start(launch), result, timeout_s, pause);
}

ProgramRun ProgramRunner::run_trusted(const std::string& module, const std::filesystem::path& folder,
                                      const std::vector<std::string>& arguments,
                                      const std::filesystem::path& result, double timeout_s,
                                      ProgramPause* pause) {
  return run(make_program_launch(module, python_, folder, {}, arguments), zygote(trusted_, true), result,
             timeout_s, pause);
}

UntrustedScratch ProgramRunner::untrusted_scratch() {
  if (auto warm = zygote(sandboxed_, false)) {
    auto scratch = warm->new_scratch(ScratchSpace::transfer_parent());
    return {std::move(warm), std::move(scratch)};
  }
  return {nullptr, ScratchSpace::create()};
}

ProgramRun ProgramRunner::run_untrusted(const std::string& module, const UntrustedScratch& scratch,
                                        const std::vector<std::string>& arguments,
                                        const CandidateSandboxContext& context,
                                        const std::filesystem::path& result, double timeout_s,
                                        ProgramPause* pause) {
  auto guarded = context;
  if (scratch.zygote) {
    guarded.protected_pids.push_back(scratch.zygote->pid());  // the program may not signal its zygote
  }
  auto launch = make_sandboxed_program_launch(module, python_, scratch.scratch.directory(), device_ == "cpu",
                                              arguments, guarded);
  return run(std::move(launch), scratch.zygote, result, timeout_s, pause);
}

std::size_t ProgramRunner::forked() const {
  const std::lock_guard lock(counts_mutex_);
  return forked_;
}

std::size_t ProgramRunner::started_fresh() const {
  const std::lock_guard lock(counts_mutex_);
  return fresh_;
}

}  // namespace kforge::runner
