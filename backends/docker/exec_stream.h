// The output of a Docker/Podman exec without a TTY: stdout and stderr multiplexed on one
// stream in frames of an 8-byte header [stream(1=stdout, 2=stderr), 0, 0, 0, size (4 bytes,
// big-endian)] followed by `size` bytes. FrameDemux splits it; OutputSink caps each stream
// like the native backend (output_bytes per stream, truncation flags).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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

}  // namespace corral::docker
