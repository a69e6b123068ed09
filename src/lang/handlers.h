// Internal: the language handlers, one file each, collected by languages.cc.
#pragma once

#include "src/lang/language.h"

namespace corral::lang {

const LanguageHandler& python_language();
const LanguageHandler& javascript_language();
const LanguageHandler& java_language();
const LanguageHandler& cpp_language();
const LanguageHandler& go_language();
const LanguageHandler& r_language();
const LanguageHandler& ruby_language();
const LanguageHandler& bash_language();

}  // namespace corral::lang
