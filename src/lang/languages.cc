#include <algorithm>
#include <cctype>

#include "src/lang/handlers.h"

namespace corral::lang {

std::vector<const LanguageHandler*> all_languages() {
  return {&python_language(), &javascript_language(), &java_language(), &cpp_language(),
          &go_language(),     &r_language(),          &ruby_language(), &bash_language()};
}

const LanguageHandler* find_language(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const LanguageHandler* h : all_languages()) {
    if (n == h->name()) return h;
    for (const auto& a : h->aliases()) {
      if (n == a) return h;
    }
  }
  return nullptr;
}

std::string language_names() {
  std::string out;
  for (const LanguageHandler* h : all_languages()) out += (out.empty() ? "" : ", ") + std::string(h->name());
  return out;
}

}  // namespace corral::lang
