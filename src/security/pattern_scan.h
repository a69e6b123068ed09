// Running one security regex over a code view, fast and with bounded stack.
//
// std::regex (ECMAScript syntax) backtracks recursively: one long match attempt over a
// 50,000-character line overflows an 8 MiB stack, and trying every start position of a
// whole file costs ~100 ns per pattern per byte. So each regex is analysed once for the
// literal strings every match must contain ("os.system", or any of {"eval", "exec"}); only
// windows around occurrences of those literals are searched, in chunks of kChunk bytes that
// overlap by kMaxMatch. A match up to kMaxMatch bytes long is always found; a longer one
// (say `open(` followed by 2,000 characters of arguments) may be missed — documented, and
// one more reason the scanner is advisory.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "src/core/status.h"

namespace corral::security {

inline constexpr size_t kMaxMatch = 1024;
inline constexpr size_t kChunk = 4096;

// The literal strings one of which every match of `pattern` contains; empty when the
// analysis finds none (then the whole view is searched). Conservative: when unsure about a
// construct it contributes nothing.
std::vector<std::string> required_literals(const std::string& pattern);

class ScanRegex {
 public:
  // Errors name `field` ("patterns[2].pattern"). Compiled regexes are cached process-wide
  // by pattern text (bounded), so policies extending a preset cost only their own rules.
  static StatusOr<ScanRegex> compile(const std::string& pattern, const std::string& field);

  struct Match {
    size_t begin;   // of the whole match
    size_t end;
    size_t report;  // begin of capture group `group` (or of the match)
    size_t group1_begin = std::string::npos;  // capture group 1, when it took part
    size_t group1_end = std::string::npos;
  };
  enum class Outcome { kDone, kGaveUp, kTimedOut };
  // Calls `fn` for each match in `view` (byte offsets), leftmost first within each window,
  // until it returns false. kGaveUp: the regex engine threw (error_complexity, error_stack);
  // kTimedOut: `deadline` passed (checked between chunks, so one chunk's search can overrun
  // it). Callers treat both as findings, never as "clean".
  Outcome for_each_match(const std::string& view, int group, const std::function<bool(const Match&)>& fn,
                         std::chrono::steady_clock::time_point deadline =
                             std::chrono::steady_clock::time_point::max()) const;

  const std::vector<std::string>& literals() const { return literals_; }
  size_t groups() const { return re_ ? re_->mark_count() : 0; }

 private:
  static StatusOr<ScanRegex> compile_uncached(const std::string& pattern, const std::string& field);

  std::shared_ptr<const std::regex> re_;
  std::vector<std::string> literals_;
};

}  // namespace corral::security
