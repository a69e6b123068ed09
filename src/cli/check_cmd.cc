// corral check: scan code against a security policy without running it. Exit 0 when the
// policy allows the code, 1 when it refuses it, 2 for bad input.
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/cli/commands.h"
#include "src/cli/output.h"
#include "src/lang/language.h"
#include "src/security/security_policy.h"

namespace po = boost::program_options;

namespace corral::cli {
namespace {

std::string language_from_extension(const std::string& path) {
  size_t slash = path.rfind('/'), dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  if (ext == "R") return "r";
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::pair<const char*, const char*> kExt[] = {
      {"py", "python"}, {"pyw", "python"}, {"js", "javascript"}, {"mjs", "javascript"}, {"cjs", "javascript"},
      {"java", "java"}, {"cc", "cpp"},     {"cpp", "cpp"},        {"cxx", "cpp"},        {"c++", "cpp"},
      {"c", "cpp"},     {"h", "cpp"},      {"hh", "cpp"},         {"hpp", "cpp"},        {"hxx", "cpp"},
      {"go", "go"},     {"r", "r"},        {"rb", "ruby"},        {"sh", "bash"},        {"bash", "bash"}};
  for (const auto& [e, l] : kExt) {
    if (ext == e) return l;
  }
  return "";
}

}  // namespace

int check_command(const std::vector<std::string>& args) {
  const std::string presets = [] {
    std::string s;
    for (const auto& n : security::SecurityPolicy::preset_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }();
  po::options_description desc("usage: corral check --policy PRESET_OR_FILE [--lang LANG] [--json] FILE|-");
  desc.add_options()("help", "show this help")("policy,p", po::value<std::string>(),
                                               ("a preset (" + presets + ") or a security policy JSON file").c_str())(
      "lang,l", po::value<std::string>(), "language (default: from the file extension)")(
      "json", po::bool_switch(), "print the report as JSON")("file", po::value<std::string>(), "source file, or -");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (auto stop = parse_options("check", args, desc, pos, &vm)) return *stop;
  if (!vm.count("policy")) return usage_error("check: --policy is required (a preset: " + presets + "; or a JSON file)");
  if (!vm.count("file")) return usage_error("check: give the FILE to check, or - for stdin");
  const std::string path = vm["file"].as<std::string>();

  std::string language;
  if (vm.count("lang")) {
    const lang::LanguageHandler* h = lang::find_language(vm["lang"].as<std::string>());
    if (!h) {
      return usage_error("check: unknown language '" + vm["lang"].as<std::string>() +
                         "' (one of: " + lang::language_names() + ")");
    }
    language = h->name();
  } else {
    language = path == "-" ? "" : language_from_extension(path);
    if (language.empty()) {
      return usage_error("check: cannot tell the language of '" + path + "' from its extension; give --lang (one of: " +
                         lang::language_names() + ")");
    }
  }

  auto policy = security::SecurityPolicy::load(vm["policy"].as<std::string>());
  if (!policy.ok()) return usage_error("check: --policy: " + policy.status().to_string());

  std::string code;
  if (path == "-") {
    if (!read_all_stdin(&code)) return usage_error("check: cannot read the code from stdin (or it is over 64 MiB)");
  } else {
    std::ifstream in(path);
    if (!in) return usage_error("check: cannot read " + path + ": " + strerror(errno));
    std::stringstream ss;
    ss << in.rdbuf();
    code = ss.str();
  }

  security::ScanReport report = security::scan(*policy, language, code);
  if (vm["json"].as<bool>()) {
    write_all(1, report.to_json().dump(2) + "\n");
  } else {
    write_all(1, report.to_text(path == "-" ? "<stdin>" : path));
  }
  return report.allowed ? 0 : 1;
}

}  // namespace corral::cli
