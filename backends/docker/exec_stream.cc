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

size_t ControlFilter::partial_marker(std::string_view s) const {
  for (size_t k = std::min(s.size(), marker_.size() - 1); k > 0; --k) {
    if (s.substr(s.size() - k) == std::string_view(marker_).substr(0, k)) return k;
  }
  return 0;
}

void ControlFilter::feed(std::string_view data, const std::function<void(std::string_view)>& out) {
  if (marker_.empty()) {
    if (!data.empty()) out(data);
    return;
  }
  std::string joined;
  if (!held_.empty()) {
    joined = std::move(held_) + std::string(data);
    held_.clear();
    data = joined;
  }
  while (!data.empty()) {
    const size_t at = data.find(marker_);
    const size_t keep = at == std::string_view::npos ? partial_marker(data) : 0;
    const std::string_view before = data.substr(0, at == std::string_view::npos ? data.size() - keep : at);
    if (in_record_) {
      if (record_.size() + before.size() <= kMaxRecord + 1) record_.append(before);
    } else if (!before.empty()) {
      out(before);
    }
    if (at == std::string_view::npos) {
      held_ = std::string(data.substr(data.size() - keep));
      return;
    }
    if (in_record_ && !record_.empty() && record_.size() <= kMaxRecord + 1 && records_.size() < kMaxRecords) {
      records_.push_back({record_[0], record_.substr(1)});
    }
    in_record_ = !in_record_;
    record_.clear();
    data.remove_prefix(at + marker_.size());
  }
}

void ControlFilter::finish(const std::function<void(std::string_view)>& out) {
  if (!in_record_ && !held_.empty()) out(held_);
  held_.clear();
  record_.clear();
  in_record_ = false;
}

const ControlFilter::Record* ControlFilter::find(char type) const {
  for (auto r = records_.rbegin(); r != records_.rend(); ++r) {
    if (r->type == type) return &*r;
  }
  return nullptr;
}

}  // namespace corral::docker
