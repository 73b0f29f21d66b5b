#include "cli/knobs_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "optimize/tunable_knobs.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"

namespace kforge::cli {
namespace {

struct KnobsOptions {
  std::string candidate;
  std::vector<std::string> settings;  // KNOB=VALUE
  std::string out;
  bool json = false;
};

nlohmann::json knobs_json(const optimize::KnobSearch& search) {
  nlohmann::json knobs = nlohmann::json::array();
  for (std::size_t i = 0; i < search.knobs.size(); ++i) {
    const auto& knob = search.knobs[i];
    knobs.push_back({{"index", i},
                     {"name", knob.name},
                     {"kind", optimize::knob_kind_name(knob.kind)},
                     {"where", knob.where},
                     {"kernels", knob.kernels},
                     {"value", knob.value},
                     {"choices", knob.choices}});
  }
  return {{"knobs", knobs}, {"fixed", search.fixed}};
}

std::string knobs_text(const optimize::KnobSearch& search) {
  std::string text;
  for (std::size_t i = 0; i < search.knobs.size(); ++i) {
    const auto& knob = search.knobs[i];
    text += fmt::format("{:>3}  {} = {}  ({}; {}; choices {})\n", i, knob.name, knob.value,
                        optimize::knob_kind_name(knob.kind), knob.where, fmt::join(knob.choices, " "));
  }
  if (search.knobs.empty()) {
    text += "no knobs the tuner can rewrite\n";
  }
  for (const auto& line : search.fixed) {
    text += fmt::format("fixed: {}\n", line);
  }
  return text;
}

// The knob a --set names: its index, or its name when only one knob has it.
std::size_t knob_index(const optimize::KnobSearch& search, const std::string& key) {
  if (!key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const auto index = std::stoull(key);
    if (index < search.knobs.size()) {
      return index;
    }
    throw std::invalid_argument(
        fmt::format("--set {}: the candidate has {} knobs", key, search.knobs.size()));
  }
  std::vector<std::size_t> named;
  for (std::size_t i = 0; i < search.knobs.size(); ++i) {
    if (search.knobs[i].name == key) {
      named.push_back(i);
    }
  }
  if (named.size() != 1) {
    throw std::invalid_argument(fmt::format(
        "--set {}: {} knobs have that name; name one by its index (kforge knobs --candidate FILE lists them)",
        key, named.size()));
  }
  return named.front();
}

// The knobs' values with each --set applied.
std::vector<long long> chosen_values(const optimize::KnobSearch& search,
                                     const std::vector<std::string>& settings) {
  std::vector<long long> values;
  for (const auto& knob : search.knobs) {
    values.push_back(knob.value);
  }
  for (const auto& setting : settings) {
    const auto equals = setting.find('=');
    if (equals == std::string::npos) {
      throw std::invalid_argument(fmt::format("--set {}: expected KNOB=VALUE", setting));
    }
    const auto index = knob_index(search, setting.substr(0, equals));
    try {
      std::size_t used = 0;
      const auto text = setting.substr(equals + 1);
      values[index] = std::stoll(text, &used);
      if (used != text.size()) {
        throw std::invalid_argument("trailing text");
      }
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("--set {}: the value is not an integer", setting));
    }
  }
  return values;
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  source::write_text_file(path, text);
}

int run_knobs(const KnobsOptions& options) {
  try {
    const auto source = source::read_candidate_code(options.candidate);
    const auto search = optimize::find_knobs(source);
    if (options.settings.empty()) {
      write_output(options.out, options.json ? knobs_json(search).dump(2) + "\n" : knobs_text(search));
      return 0;
    }
    write_output(options.out,
                 optimize::rewrite_knobs(source, search.knobs, chosen_values(search, options.settings)));
    return 0;
  } catch (const std::invalid_argument& error) {
    std::cerr << "kforge knobs: " << error.what() << "\n";
    return 2;
  } catch (const std::runtime_error& error) {
    std::cerr << "kforge knobs: " << error.what() << "\n";
    return 2;
  }
}

}  // namespace

std::function<int()> add_knobs_command(CLI::App& app) {
  auto options = std::make_shared<KnobsOptions>();
  auto* command = app.add_subcommand(
      "knobs", "List the knobs the tuner finds in a candidate, or write it with chosen values (--set)");
  command->add_option("--candidate,-c", options->candidate, "candidate file")
      ->required()
      ->check(CLI::ExistingFile)
      ->option_text("FILE");
  command
      ->add_option("--set", options->settings,
                   "KNOB=VALUE (KNOB: an index from the list, or a name only one knob has); repeatable")
      ->option_text("KNOB=VALUE");
  add_output_option(*command, options->out,
                    "where to write the list or the rewritten candidate (default: "
                    "standard output)");
  add_deprecated_option(*command, "--out", "--output", options->out);
  add_json_flag(*command, options->json, "list the knobs as JSON");
  return [command, options] { return command->parsed() ? run_knobs(*options) : -1; };
}

}  // namespace kforge::cli
