#include "src/security/pattern_scan.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <mutex>
#include <unordered_map>

namespace corral::security {
namespace {

// Reads just enough ECMAScript regex syntax to know which literal text a match must contain.
class LiteralAnalysis {
 public:
  explicit LiteralAnalysis(const std::string& p) : p_(p), n_(p.size()) {}
  std::vector<std::string> run() {
    size_t i = 0;
    Lits r = alternation(i);
    return r.ok ? r.set : std::vector<std::string>{};
  }

 private:
  struct Lits {
    bool ok = false;  // every match contains one of `set`
    std::vector<std::string> set;
  };
  static size_t score(const Lits& l) {
    if (!l.ok || l.set.empty()) return 0;
    size_t m = SIZE_MAX;
    for (const auto& s : l.set) m = std::min(m, s.size());
    return m;
  }

  Lits alternation(size_t& i) {
    Lits all{true, {}};
    for (;;) {
      Lits b = sequence(i);
      if (!b.ok) all.ok = false;
      else all.set.insert(all.set.end(), b.set.begin(), b.set.end());
      if (i < n_ && p_[i] == '|') {
        ++i;
        continue;
      }
      break;
    }
    if (!all.ok) all.set.clear();
    return all;
  }

  Lits sequence(size_t& i) {
    Lits best;
    std::string run;
    auto consider = [&](const Lits& l) {
      size_t a = score(l), b = score(best);
      if (a > b || (a == b && a > 0 && l.set.size() < best.set.size())) best = l;
    };
    auto flush = [&] {
      if (!run.empty()) consider(Lits{true, {run}});
      run.clear();
    };
    while (i < n_ && p_[i] != '|' && p_[i] != ')') {
      enum { kChar, kGroup, kOther } kind = kOther;
      char lit = 0;
      Lits group;
      char c = p_[i];
      if (c == '\\') {
        if (i + 1 >= n_) {
          ++i;
        } else {
          char e = p_[i + 1];
          i += 2;
          if (!std::isalnum(static_cast<unsigned char>(e))) {
            kind = kChar, lit = e;
          } else if (e == 'x') {
            i += 2;
          } else if (e == 'u') {
            i += 4;
          } else if (e == 'c') {
            i += 1;
          } else if (std::isdigit(static_cast<unsigned char>(e))) {
            while (i < n_ && std::isdigit(static_cast<unsigned char>(p_[i]))) ++i;
          }
          i = std::min(i, n_);
        }
      } else if (c == '[') {
        ++i;
        if (i < n_ && p_[i] == '^') ++i;
        while (i < n_ && p_[i] != ']') i += p_[i] == '\\' ? 2 : 1;
        i = std::min(i + 1, n_);
      } else if (c == '(') {
        ++i;
        bool lookaround = false;
        if (i < n_ && p_[i] == '?') {
          if (i + 1 < n_ && p_[i + 1] == ':') i += 2;
          else lookaround = true, i += 2;
        }
        group = alternation(i);
        if (i < n_ && p_[i] == ')') ++i;
        if (!lookaround) kind = kGroup;
      } else if (c == '.' || c == '^' || c == '$' || c == '*' || c == '+' || c == '?' || c == '{') {
        ++i;
      } else {
        kind = kChar, lit = c;
        ++i;
      }
      // A quantifier: optional atoms contribute nothing; repeated ones count once.
      int q = 0;  // 1: may be absent, 2: present one or more times
      if (i < n_) {
        char d = p_[i];
        if (d == '*' || d == '?') {
          q = 1, ++i;
        } else if (d == '+') {
          q = 2, ++i;
        } else if (d == '{') {
          size_t j = i + 1, m = 0;
          bool digits = false;
          while (j < n_ && std::isdigit(static_cast<unsigned char>(p_[j]))) m = m * 10 + (p_[j++] - '0'), digits = true;
          size_t close = p_.find('}', j);
          if (digits && close != std::string::npos && j < n_ && (p_[j] == '}' || p_[j] == ',')) {
            i = close + 1;
            q = m == 0 ? 1 : 2;
          }
        }
        if (q && i < n_ && p_[i] == '?') ++i;  // lazy
      }
      if (q == 1) {
        flush();
        continue;
      }
      if (kind == kChar) {
        run += lit;
        if (q == 2) flush();
      } else {
        flush();
        if (kind == kGroup && group.ok) consider(group);
      }
    }
    flush();
    return best;
  }

  const std::string& p_;
  const size_t n_;
};

// Counted repetitions are expanded into automaton states by std::regex: cap them.
bool repetition_too_large(const std::string& p) {
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (p[i] != '{') continue;
    size_t v = 0;
    for (size_t j = i + 1; j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == ','); ++j) {
      if (p[j] == ',') {
        v = 0;
        continue;
      }
      v = v * 10 + (p[j] - '0');
      if (v > 1000) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> required_literals(const std::string& pattern) { return LiteralAnalysis(pattern).run(); }

StatusOr<ScanRegex> ScanRegex::compile(const std::string& pattern, const std::string& field) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, ScanRegex>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(pattern);
    if (it != cache->end()) return it->second;
  }
  ASSIGN_OR_RETURN(ScanRegex r, compile_uncached(pattern, field));
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() >= 2048) cache->clear();
  cache->emplace(pattern, r);
  return r;
}

StatusOr<ScanRegex> ScanRegex::compile_uncached(const std::string& pattern, const std::string& field) {
  if (pattern.empty()) return InvalidArgument(field, "must not be empty");
  if (pattern.size() > 4096) return InvalidArgument(field, "is longer than 4096 characters");
  if (repetition_too_large(pattern)) return InvalidArgument(field, "has a repetition count above 1000");
  ScanRegex r;
  try {
    r.re_ = std::make_shared<const std::regex>(
        pattern, std::regex::ECMAScript | std::regex::multiline | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidArgument(field, std::string("is not a valid regular expression (ECMAScript syntax): ") + e.what());
  }
  if (std::regex_match(std::string(), *r.re_)) {
    return InvalidArgument(field, "matches the empty string, so it would match everywhere");
  }
  r.literals_ = required_literals(pattern);
  return r;
}

ScanRegex::Outcome ScanRegex::for_each_match(const std::string& view, int group,
                                             const std::function<bool(const Match&)>& fn,
                                             std::chrono::steady_clock::time_point deadline) const {
  const size_t n = view.size();
  std::vector<std::pair<size_t, size_t>> windows;
  if (literals_.empty()) {
    windows.emplace_back(0, n);
  } else {
    for (const auto& lit : literals_) {
      for (size_t p = view.find(lit); p != std::string::npos; p = view.find(lit, p + 1)) {
        windows.emplace_back(p > kMaxMatch ? p - kMaxMatch : 0, std::min(n, p + lit.size() + kMaxMatch));
      }
    }
    std::sort(windows.begin(), windows.end());
    std::vector<std::pair<size_t, size_t>> merged;
    for (const auto& w : windows) {
      if (!merged.empty() && w.first <= merged.back().second) merged.back().second = std::max(merged.back().second, w.second);
      else merged.push_back(w);
    }
    windows = std::move(merged);
  }
  for (const auto& [a, b] : windows) {
    for (size_t cs = a;;) {
      if (std::chrono::steady_clock::now() > deadline) return Outcome::kTimedOut;
      const size_t ce = std::min(b, cs + kChunk);
      const size_t owned_end = ce == b ? b : ce - kMaxMatch;  // later starts belong to the next chunk
      auto flags = std::regex_constants::match_default;
      if (cs > 0) flags |= std::regex_constants::match_prev_avail;
      if (ce < n) flags |= std::regex_constants::match_not_eol;
      try {
        const char* base = view.data() + cs;
        for (std::cregex_iterator it(base, view.data() + ce, *re_, flags), end; it != end; ++it) {
          const std::cmatch& m = *it;
          size_t begin = cs + static_cast<size_t>(m.position(0));
          if (begin >= owned_end) break;
          Match match{begin, begin + static_cast<size_t>(m.length(0)), begin};
          if (group > 0 && static_cast<size_t>(group) < m.size() && m[group].matched) {
            match.report = cs + static_cast<size_t>(m.position(group));
          }
          if (m.size() > 1 && m[1].matched) {
            match.group1_begin = cs + static_cast<size_t>(m.position(1));
            match.group1_end = match.group1_begin + static_cast<size_t>(m.length(1));
          }
          if (!fn(match)) return Outcome::kDone;
        }
      } catch (const std::regex_error&) {
        return Outcome::kGaveUp;
      }
      if (ce == b) break;
      cs = owned_end;
    }
  }
  return Outcome::kDone;
}

}  // namespace corral::security
