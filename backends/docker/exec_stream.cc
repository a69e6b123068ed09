#include "backends/docker/exec_stream.h"

#include <algorithm>

namespace corral::docker {

bool FrameDemux::feed(std::string_view data, const std::function<void(int, std::string_view)>& out) {
  while (!data.empty()) {
    if (remaining_ == 0) {
      size_t take = std::min(data.size(), sizeof header_ - header_len_);
      std::copy_n(data.data(), take, header_ + header_len_);
      header_len_ += take;
      data.remove_prefix(take);
      if (header_len_ < sizeof header_) return true;
      header_len_ = 0;
      stream_ = static_cast<unsigned char>(header_[0]);
      if (stream_ > 2) return false;
      remaining_ = (uint32_t{static_cast<unsigned char>(header_[4])} << 24) |
                   (uint32_t{static_cast<unsigned char>(header_[5])} << 16) |
                   (uint32_t{static_cast<unsigned char>(header_[6])} << 8) | static_cast<unsigned char>(header_[7]);
      continue;
    }
    size_t take = std::min<size_t>(data.size(), remaining_);
    out(stream_, data.substr(0, take));
    remaining_ -= static_cast<uint32_t>(take);
    data.remove_prefix(take);
  }
  return true;
}

bool OutputSink::add(std::string_view s) {
  if (s.empty()) return true;
  size_t room = data->size() < cap ? cap - data->size() : 0;
  std::string_view keep = s.substr(0, std::min(room, s.size()));
  if (!keep.empty()) {
    data->append(keep);
    if (on_data) on_data(keep);
  }
  if (keep.size() < s.size()) {
    *truncated = true;
    return false;
  }
  return true;
}

}  // namespace corral::docker
