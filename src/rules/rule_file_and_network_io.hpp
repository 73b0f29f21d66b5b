#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// File, network and serialisation I/O (open, io, os file operations, pathlib I/O, shutil, tempfile,
// sockets and HTTP clients, pickle, torch.load/save, numpy load/save, mmap) and environment
// writes. Reading os.environ only warns.
class FileAndNetworkIoRule final : public Rule {
 public:
  static constexpr std::string_view kId = "file-and-network-io";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
