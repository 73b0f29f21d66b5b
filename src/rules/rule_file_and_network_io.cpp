#include "rules/rule_file_and_network_io.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that exist for files, networks or serialisation: their import is reported.
constexpr auto kFileAndNetworkIoModules = std::to_array<std::string_view>(
    {"io", "_io", "shutil", "tempfile", "glob", "fileinput", "mmap", "zipfile", "tarfile", "gzip", "socket",
     "_socket", "socketserver", "ssl", "select", "selectors", "urllib", "urllib3", "http", "requests",
     "httpx", "aiohttp", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "websocket",
     "websockets", "paramiko", "pickle", "_pickle", "cPickle", "dill", "cloudpickle", "shelve", "dbm",
     "sqlite3", "joblib", "h5py", "safetensors",
     // raw descriptors: the OS interface without the os wrapper, descriptor control, fault dumps to a fd
     "posix", "nt", "fcntl", "termios", "faulthandler"});

// Reported at each use.
constexpr auto kFileAndNetworkIoMembers = std::to_array<std::string_view>({"builtins.open",
                                                                           "codecs.open",
                                                                           "os.open",
                                                                           "os.read",
                                                                           "os.write",
                                                                           "os.pread",
                                                                           "os.pwrite",
                                                                           "os.readv",
                                                                           "os.writev",
                                                                           "os.remove",
                                                                           "os.unlink",
                                                                           "os.rename",
                                                                           "os.renames",
                                                                           "os.replace",
                                                                           "os.listdir",
                                                                           "os.scandir",
                                                                           "os.walk",
                                                                           "os.fwalk",
                                                                           "os.mkdir",
                                                                           "os.makedirs",
                                                                           "os.rmdir",
                                                                           "os.removedirs",
                                                                           "os.truncate",
                                                                           "os.ftruncate",
                                                                           "os.fdopen",
                                                                           "os.link",
                                                                           "os.symlink",
                                                                           "os.readlink",
                                                                           "os.chmod",
                                                                           "os.chown",
                                                                           "os.utime",
                                                                           "os.sendfile",
                                                                           "os.mkfifo",
                                                                           "os.mknod",
                                                                           "os.dup",
                                                                           "os.dup2",
                                                                           "os.memfd_create",
                                                                           "os.chdir",
                                                                           "os.chroot",
                                                                           "os.pipe",
                                                                           "os.pipe2",
                                                                           "os.close",
                                                                           "os.closerange",
                                                                           "os.fstat",
                                                                           "os.lseek",
                                                                           "os.fsync",
                                                                           "os.fdatasync",
                                                                           "os.openpty",
                                                                           "os.set_inheritable",
                                                                           "os.set_blocking",
                                                                           "os.splice",
                                                                           "os.copy_file_range",
                                                                           "os.preadv",
                                                                           "os.pwritev",
                                                                           "os.eventfd",
                                                                           "os.fchmod",
                                                                           "os.fchown",
                                                                           "os.fchdir",
                                                                           "os.login_tty",
                                                                           "os.stat",
                                                                           "os.lstat",
                                                                           "os.access",
                                                                           "os.path.exists",
                                                                           "os.path.lexists",
                                                                           "os.path.isfile",
                                                                           "os.path.isdir",
                                                                           "os.path.islink",
                                                                           "os.path.getsize",
                                                                           "os.path.getmtime",
                                                                           "os.path.getatime",
                                                                           "os.path.getctime",
                                                                           "os.path.samefile",
                                                                           "posix.open",
                                                                           "posix.read",
                                                                           "posix.write",
                                                                           "posix.remove",
                                                                           "posix.unlink",
                                                                           "posix.listdir",
                                                                           "posix.scandir",
                                                                           "torch.load",
                                                                           "torch.save",
                                                                           "torch.from_file",
                                                                           "torch.serialization",
                                                                           "torch.hub",
                                                                           "torch.package",
                                                                           "torch.utils.model_zoo",
                                                                           "torch.UntypedStorage.from_file",
                                                                           "torch.TypedStorage.from_file",
                                                                           "numpy.load",
                                                                           "numpy.save",
                                                                           "numpy.savez",
                                                                           "numpy.savez_compressed",
                                                                           "numpy.fromfile",
                                                                           "numpy.loadtxt",
                                                                           "numpy.savetxt",
                                                                           "numpy.genfromtxt",
                                                                           "numpy.memmap",
                                                                           "numpy.lib.format",
                                                                           "numpy.lib.npyio",
                                                                           "numpy.DataSource"});

// The tables hashed once, on first use.
const ForbiddenApi& file_and_network_io_api() {
  static const ForbiddenApi api(kFileAndNetworkIoModules, kFileAndNetworkIoMembers);
  return api;
}

// pathlib methods that touch the file system (Path(...).read_text() and friends).
constexpr auto kPathMethods = std::to_array<std::string_view>(
    {"read_text", "read_bytes", "write_text",  "write_bytes", "open",    "unlink",  "mkdir",
     "rmdir",     "touch",      "rename",      "replace",     "iterdir", "glob",    "rglob",
     "walk",      "symlink_to", "hardlink_to", "chmod",       "exists",  "is_file", "is_dir",
     "stat",      "lstat",      "readlink",    "samefile"});

// Methods that write files whatever the receiver (ndarray.tofile).
constexpr auto kWritingMethods = std::to_array<std::string_view>({"tofile"});

// The interpreter's standard streams: print(..., file=sys.stderr) and sys.stdout.write are fine, but their
// buffers, raw files, descriptors and classes open any descriptor (`type(sys.stdout.buffer)(4, "wb")`),
// which is how a candidate would reach the worker's reply channel.
constexpr auto kStandardStreams = std::to_array<std::string_view>(
    {"sys.stdout", "sys.stderr", "sys.stdin", "sys.__stdout__", "sys.__stderr__", "sys.__stdin__"});
constexpr auto kStreamInternals =
    std::to_array<std::string_view>({"buffer", "raw", "fileno", "detach", "__class__", "reconfigure"});
constexpr auto kOriginalStreams =
    std::to_array<std::string_view>({"sys.__stdout__", "sys.__stderr__", "sys.__stdin__"});

// Paths that name the process's own descriptors and memory.
constexpr auto kDescriptorPaths = std::to_array<std::string_view>(
    {"/proc/self/fd", "/dev/fd", "/proc/self/mem", "/proc/self/environ", "/proc/thread-self/fd",
     "/proc/self/fdinfo", "/dev/stdout", "/dev/stderr"});

constexpr std::string_view kDescriptorWhy =
    ": raw file descriptors reach the worker's protocol channel and other open files; print to "
    "sys.stdout or sys.stderr for logs";

// os.environ methods that change the environment.
constexpr auto kEnvironWriters = std::to_array<std::string_view>(
    {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"});

// Environment access: writes through os.environ or putenv/unsetenv; reads otherwise.
constexpr auto kEnvironment =
    std::to_array<std::string_view>({"os.environ", "os.environb", "os.getenv", "os.getenvb", "os.putenv",
                                     "os.unsetenv", "posix.environ", "posix.putenv", "posix.unsetenv"});

constexpr std::string_view kFileAndNetworkIoWhy =
    ": a kernel needs no files, sockets or serialised objects, and I/O is how precomputed outputs get "
    "loaded or results leak out; compute the outputs from the inputs with Triton kernels";

constexpr std::string_view kEnvironmentWriteWhy =
    ": environment variables configure Triton, PyTorch and CUDA for the whole process (the interpreter "
    "mode, caches, launch blocking); leave the environment as kforge sets it";

constexpr std::string_view kEnvironmentReadWhy =
    ": allowed (warn only), but a kernel whose behaviour depends on the environment may not be measuring "
    "what the verdict reports";

class IoChecker {
 public:
  IoChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(FileAndNetworkIoRule::kId, findings),
        severity_(severity) {}

  void run() {
    scan_forbidden_api(
        context_, names_, file_and_network_io_api(),
        [this](const ForbiddenImport& import) {
          sink_.add(severity_, import_subject(import) + std::string(kFileAndNetworkIoWhy),
                    import.statement->location);
        },
        [this](const source::Expr& use, const Resolved& resolved) {
          sink_.add(severity_,
                    describe(use, resolved.origin) + " reads or writes files, sockets or serialised data" +
                        std::string(kFileAndNetworkIoWhy),
                    use.location);
        });
    source::walk(context_.module, [this](const source::Node& node) {
      if (is_reference_root(node, names_)) {
        check_reference(source::as_expr(node));
      }
      check_descriptor_access(node);
      if (const auto* attribute = source::node_cast<source::Attribute>(node);
          attribute != nullptr && in_table(kWritingMethods, attribute->attr)) {
        sink_.add(severity_,
                  "`" + spelling(*attribute) + "` writes a file" + std::string(kFileAndNetworkIoWhy),
                  attribute->location);
      }
      return source::WalkAction::visit_children;
    });
  }

 private:
  // Stream internals (`sys.stdout.buffer`, `type(sys.stderr)`, `sys.__stdout__`) and descriptor paths.
  void check_descriptor_access(const source::Node& node) {
    if (const auto text = string_literal(source::expr_cast(&node))) {
      for (const std::string_view path : kDescriptorPaths) {
        if (text->find(path) != std::string::npos) {
          sink_.add(severity_,
                    "the path `" + std::string(path) + "` names the process's own descriptors or memory" +
                        std::string(kDescriptorWhy),
                    node.location);
          return;
        }
      }
    }
    if (const auto* call = source::node_cast<source::Call>(node);
        call != nullptr && call->args.size() == 1 && names_.resolve(*call->func) == "builtins.type" &&
        standard_stream(*call->args[0])) {
      sink_.add(severity_,
                "`" + spelling(*call) + "` takes the class of a standard stream, which opens any descriptor" +
                    std::string(kDescriptorWhy),
                call->location);
      return;
    }
    const auto* attribute = source::node_cast<source::Attribute>(node);
    if (attribute == nullptr) {
      return;
    }
    const std::string origin = names_.resolve(*attribute);
    const bool internals = in_table(kStreamInternals, attribute->attr) && standard_stream(*attribute->value);
    const bool original = in_table(kOriginalStreams, origin);
    if (internals || original) {
      sink_.add(severity_,
                describe(*attribute, origin) + " reaches a standard stream's file or descriptor" +
                    std::string(kDescriptorWhy),
                attribute->location);
    }
  }

  bool standard_stream(const source::Expr& expr) const {
    const std::string origin = names_.resolve(expr);
    return std::any_of(kStandardStreams.begin(), kStandardStreams.end(),
                       [&origin](std::string_view stream) { return in_module(origin, stream); });
  }

  void check_reference(const source::Expr& reference) {
    const std::string origin = names_.resolve(reference);
    if (in_module(origin, "pathlib") && in_table(kPathMethods, last_component(origin)) &&
        assignment_of_target(reference, names_) == nullptr) {
      sink_.add(severity_,
                describe(reference, origin) + " touches the file system" + std::string(kFileAndNetworkIoWhy),
                reference.location);
      return;
    }
    // Only the environment objects themselves: a local holding os.environ.get(...) is a value.
    const auto environment = is_static_origin(origin) ? module_match(origin, kEnvironment) : std::nullopt;
    if (!environment) {
      return;
    }
    const bool writes = assignment_of_target(reference, names_) != nullptr || *environment == "os.putenv" ||
                        *environment == "os.unsetenv" || *environment == "posix.putenv" ||
                        *environment == "posix.unsetenv" ||
                        (origin != *environment && in_table(kEnvironWriters, last_component(origin)));
    if (writes) {
      sink_.add(severity_,
                describe(reference, origin) + " changes the environment" + std::string(kEnvironmentWriteWhy),
                reference.location);
    } else {
      sink_.add(Severity::warn,
                describe(reference, origin) + " reads the environment" + std::string(kEnvironmentReadWhy),
                reference.location);
    }
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
};

}  // namespace

std::string_view FileAndNetworkIoRule::summary() const {
  return "no file, network or serialisation I/O (open, os file calls, sockets, pickle, torch.load...) and no "
         "environment writes";
}

void FileAndNetworkIoRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  IoChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
