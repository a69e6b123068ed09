#include "src/lang/artifacts.h"

#include <sstream>

#include "src/lang/language.h"

namespace corral::lang {
namespace {

uint32_t be32(const std::string& b, size_t at) {
  return (uint32_t(uint8_t(b[at])) << 24) | (uint32_t(uint8_t(b[at + 1])) << 16) | (uint32_t(uint8_t(b[at + 2])) << 8) |
         uint8_t(b[at + 3]);
}

}  // namespace

std::string mime_for(const std::string& name) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".png", "image/png"},       {".svg", "image/svg+xml"},   {".jpg", "image/jpeg"},
      {".jpeg", "image/jpeg"},     {".gif", "image/gif"},       {".pdf", "application/pdf"},
      {".html", "text/html"},      {".htm", "text/html"},       {".txt", "text/plain"},
      {".csv", "text/csv"},        {".json", "application/json"}, {".md", "text/markdown"},
  };
  for (const auto& [ext, mime] : kTypes) {
    std::string e = ext;
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return mime;
  }
  return "application/octet-stream";
}

bool image_size(const std::string& b, uint32_t* w, uint32_t* h) {
  if (b.size() >= 24 && b.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 && b.compare(12, 4, "IHDR") == 0) {
    *w = be32(b, 16);
    *h = be32(b, 20);
    return true;
  }
  if (b.size() >= 10 && (b.compare(0, 6, "GIF87a") == 0 || b.compare(0, 6, "GIF89a") == 0)) {
    *w = uint8_t(b[6]) | (uint8_t(b[7]) << 8);
    *h = uint8_t(b[8]) | (uint8_t(b[9]) << 8);
    return true;
  }
  // JPEG: walk the segments to a start-of-frame marker.
  if (b.size() >= 4 && uint8_t(b[0]) == 0xFF && uint8_t(b[1]) == 0xD8) {
    size_t i = 2;
    while (i + 9 < b.size() && uint8_t(b[i]) == 0xFF) {
      uint8_t marker = uint8_t(b[i + 1]);
      size_t len = (uint8_t(b[i + 2]) << 8) | uint8_t(b[i + 3]);
      if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
        *h = (uint8_t(b[i + 5]) << 8) | uint8_t(b[i + 6]);
        *w = (uint8_t(b[i + 7]) << 8) | uint8_t(b[i + 8]);
        return true;
      }
      i += 2 + len;
    }
  }
  return false;
}

std::string artifact_listing_command() {
  return std::string("m=") + kRunMarker + "; for d in " + kOutDir + " " + kPlotDir +
         "; do [ -d \"$d\" ] || continue; for f in \"$d\"/*; do "
         "[ -f \"$f\" ] && [ ! -L \"$f\" ] && [ \"$f\" -nt \"$m\" ] && printf '%s %s\\n' \"$(wc -c < \"$f\")\" \"$f\"; "
         "done; done; true";
}

StatusOr<std::vector<Artifact>> collect_artifacts(Executor& ex, Sandbox& sb, const ArtifactOptions& options) {
  ExecRequest list;
  list.argv = {"/bin/sh", "-c", artifact_listing_command()};
  list.wall_ms = 10'000;
  auto listed = ex.exec(sb, list);
  if (!listed.ok()) return listed.status();
  if (listed->status() != ExecStatus::kOk) {
    return Status(ErrorCode::kInternal, "listing artifacts failed: " + listed->stderr_data, "artifacts");
  }
  return read_listed_artifacts(ex, sb, listed->stdout_data, options);
}

std::vector<Artifact> read_listed_artifacts(Executor& ex, Sandbox& sb, const std::string& listing,
                                            const ArtifactOptions& options) {
  std::vector<Artifact> out;
  uint64_t total = 0;
  std::istringstream in(listing);
  std::string line;
  while (std::getline(in, line)) {
    auto space = line.find(' ');
    if (space == std::string::npos) continue;
    Artifact a;
    a.size = std::strtoull(line.c_str(), nullptr, 10);
    a.path = line.substr(space + 1);
    a.name = a.path.substr(a.path.rfind('/') + 1);
    a.mime = mime_for(a.name);
    if (a.size > options.max_bytes_each || total + a.size > options.max_bytes_total) {
      a.truncated = true;
    } else {
      auto files = ex.get_files(sb, {a.path}, options.max_bytes_each);
      if (!files.ok()) continue;  // gone or replaced by something that is not a file: skip
      a.bytes = std::move((*files)[0].data);
      a.size = a.bytes.size();
      total += a.size;
      image_size(a.bytes, &a.width, &a.height);
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace corral::lang
