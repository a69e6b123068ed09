// Restricted modules as each language names them. Most forms are short regexes (one per
// form per language, all of the language's modules in one alternation, group 1 = the module
// as written); the forms that can be arbitrarily long — python's `import a, b, c, os` and go's
// import blocks — are parsed instead, so padding a statement cannot push a module out of
// the scanner's reach.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "src/security/code_text.h"
#include "src/security/security_policy.h"

namespace corral::security {

struct ModuleForm {
  std::string regex;   // group 1: the module name as written
  bool report_module;  // report at the module name (else at the start of the statement)
  Scope scope;
};

// The regex forms for `language` (canonical) restricting `names`.
std::vector<ModuleForm> module_forms(const std::string& language, const std::vector<std::string>& names);

struct ImportName {
  size_t pos;        // offset in the CodeText source
  std::string name;  // as written, whitespace removed
};
// Names imported by the statements only a parser follows: python `import` lists (also the
// names after `from x import`, which catches re-exports like `from shutil import os`), go
// import specs (single and blocks). Empty for other languages.
std::vector<ImportName> parsed_imports(const CodeText& ct);

// The restricted module that `written` names: itself, or a submodule of it ("os.path" is
// os, "os/exec" is os); the longest name wins. Null if none.
const RestrictedModule* match_module(const std::vector<RestrictedModule>& modules, std::string written);

bool valid_module_name(const std::string& name);

}  // namespace corral::security
