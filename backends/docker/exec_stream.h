// The output of a Docker/Podman exec without a TTY: stdout and stderr multiplexed on one
// stream in frames of an 8-byte header [stream(1=stdout, 2=stderr), 0, 0, 0, size (4 bytes,
// big-endian)] followed by `size` bytes. FrameDemux splits it; OutputSink caps each stream
// like the native backend (output_bytes per stream, truncation flags). ControlFilter takes
// the exec helper's control records (exec_helper.h) out of stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::docker {

class FrameDemux {
 public:
  // Feeds raw bytes; calls `out(stream, data)` for each complete piece of a frame.
  // Returns false when the stream is corrupt (an unknown stream number).
  bool feed(std::string_view data, const std::function<void(int, std::string_view)>& out);

 private:
  char header_[8];
  size_t header_len_ = 0;
  uint32_t remaining_ = 0;  // payload bytes still due for the current frame
  int stream_ = 0;
};

struct OutputSink {
  uint64_t cap = 0;
  std::string* data = nullptr;
  bool* truncated = nullptr;
  std::function<void(std::string_view)> on_data;
  // Appends up to the cap; returns false once the cap was passed (the caller stops the run).
  bool add(std::string_view s);
};

// Splits a stream into the program's own bytes (passed on) and records framed as MARKER TYPE
// PAYLOAD MARKER (kept). Bytes that might begin a marker are held back until the next chunk
// shows whether they do, so a record never reaches the caller's stream callbacks; a record
// the stream ended inside (the helper was killed) is dropped.
class ControlFilter {
 public:
  struct Record {
    char type = 0;
    std::string payload;
  };
  // Kept at most: records beyond these are dropped (a program that learnt the marker cannot
  // make the filter hold more than this).
  static constexpr size_t kMaxRecord = 4u << 20;
  static constexpr size_t kMaxRecords = 16;

  // An empty marker passes everything through.
  explicit ControlFilter(std::string marker = {}) : marker_(std::move(marker)) {}
  void feed(std::string_view data, const std::function<void(std::string_view)>& out);
  // End of stream: what was held back was not a marker after all.
  void finish(const std::function<void(std::string_view)>& out);
  const std::vector<Record>& records() const { return records_; }
  // The last record of a type (the helper writes its own after the program's output).
  const Record* find(char type) const;

 private:
  // How many bytes at the end of `s` could be the start of a marker.
  size_t partial_marker(std::string_view s) const;

  std::string marker_;
  std::string held_;
  bool in_record_ = false;
  std::string record_;
  std::vector<Record> records_;
};

}  // namespace corral::docker
