// DockerExecutor's image operations: import a rootfs, build from a Dockerfile, commit a
// sandbox into a new tag. Both engines stream progress as JSON lines; an "error" line is the
// failure, and the image id is in the last "aux"/"status"/"stream" line that names one.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/common/tar.h"
#include "backends/docker/docker_executor.h"

namespace corral::docker {

namespace {

// "repo:tag" -> {repo, tag}; a colon inside a registry host:port is not a tag separator.
std::pair<std::string, std::string> split_tag(const std::string& ref) {
  size_t colon = ref.rfind(':');
  size_t slash = ref.rfind('/');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return {ref, "latest"};
  return {ref.substr(0, colon), ref.substr(colon + 1)};
}

Status check_tag(const std::string& tag) {
  if (tag.empty()) return InvalidArgument("tag", "is empty");
  for (char c : tag) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/' || c == ':')) {
      return InvalidArgument("tag", "'" + tag + "' has a character images cannot be named with");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> DockerExecutor::wait_for_image_id(const std::string& step, const std::string& body) {
  std::string id;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("error")) return Internal(step + ": " + j["error"].dump());
    if (j.contains("errorDetail")) return Internal(step + ": " + j["errorDetail"].dump());
    auto take = [&](const std::string& s) {
      if (s.rfind("sha256:", 0) == 0) id = s;
    };
    if (j.contains("aux") && j["aux"].is_object() && j["aux"].contains("ID")) take(j["aux"]["ID"].get<std::string>());
    if (j.contains("status") && j["status"].is_string()) take(j["status"].get<std::string>());
    if (j.contains("id") && j["id"].is_string()) take(j["id"].get<std::string>());
    if (j.contains("stream") && j["stream"].is_string()) {
      // podman: the last stream line of a build is the bare id
      std::string s = j["stream"].get<std::string>();
      while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
      if (s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos) id = "sha256:" + s;
      if (s.rfind("Successfully built ", 0) == 0) id = s.substr(19);
    }
  }
  if (id.empty()) return Internal(step + ": the engine reported no image id");
  return id;
}

StatusOr<bool> DockerExecutor::image_exists(const std::string& name) {
  ASSIGN_OR_RETURN(http::Response r, client_->send({"GET", api("/images/" + http::url_escape(name) + "/json")}));
  if (r.status == 404) return false;
  if (r.status != 200) return Internal(options_.flavor + ": inspect image " + name + ": " + http::engine_message(r.body));
  return true;
}

StatusOr<std::string> DockerExecutor::import_rootfs(const std::string& rootfs_dir, const std::string& tag) {
  RETURN_IF_ERROR(check_tag(tag));
  ASSIGN_OR_RETURN(std::string archive, tar::write_tree(rootfs_dir));
  auto [repo, t] = split_tag(tag);
  // Imported under a temporary name, then tagged and the temporary name dropped: podman's
  // compat import ignores `tag` (it would name the image <repo>:latest, over whatever that was).
  const std::string temp = "corral-import-" + std::to_string(getpid()) + "-" + std::to_string(time(nullptr));
  http::Request r{"POST", api("/images/create?fromSrc=-&repo=" + temp + "&tag=latest"), std::move(archive),
                  "application/x-tar"};
  const std::string step = options_.flavor + ": import " + rootfs_dir;
  ASSIGN_OR_RETURN(http::Response resp, client_->call(step, r));
  ASSIGN_OR_RETURN(std::string id, wait_for_image_id(step, resp.body));
  Status tagged = client_
                      ->call(step + ": tag",
                             {"POST", api("/images/" + http::url_escape(id) + "/tag?repo=" + http::url_escape(repo) +
                                          "&tag=" + http::url_escape(t)),
                              ""})
                      .status();
  // Untags only: the image keeps its real name.
  (void)client_->send({"DELETE", api("/images/" + temp + ":latest")});
  RETURN_IF_ERROR(tagged);
  owned_images_.push_back({tag, id});
  return id;
}

StatusOr<std::string> DockerExecutor::build_image(const std::string& context_dir, const std::string& dockerfile,
                                                  const std::string& tag) {
  RETURN_IF_ERROR(check_tag(tag));
  ASSIGN_OR_RETURN(std::string archive, tar::write_tree(context_dir));
  std::string path = "/build?t=" + http::url_escape(tag) + "&rm=1&forcerm=1&networkmode=none";
  if (!dockerfile.empty()) path += "&dockerfile=" + http::url_escape(dockerfile);
  http::Request r{"POST", api(path), std::move(archive), "application/x-tar"};
  const std::string step = options_.flavor + ": build " + tag;
  ASSIGN_OR_RETURN(http::Response resp, client_->call(step, r));
  ASSIGN_OR_RETURN(std::string id, wait_for_image_id(step, resp.body));
  owned_images_.push_back({tag, id});
  return id;
}

StatusOr<std::string> DockerExecutor::commit(Sandbox& sandbox, const std::string& tag) {
  RETURN_IF_ERROR(check_tag(tag));
  auto [repo, t] = split_tag(tag);
  if (tag == options_.image || repo + ":" + t == options_.image || (t == "latest" && repo == options_.image)) {
    return InvalidArgument("tag", "refusing to commit over the base image " + options_.image + "; choose a new tag");
  }
  ASSIGN_OR_RETURN(bool exists, image_exists(repo + ":" + t));
  if (exists) return InvalidArgument("tag", "image " + repo + ":" + t + " already exists; commit only into a new tag");
  // `changes` rather than a config body: podman's compat commit ignores the body's config.
  const std::string path = "/commit?container=" + http::url_escape(sandbox.id()) + "&repo=" + http::url_escape(repo) +
                           "&tag=" + http::url_escape(t) + "&pause=1";
  ASSIGN_OR_RETURN(http::Response r, client_->call(options_.flavor + ": commit", {"POST", api(path), "{}"}));
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.contains("Id") || !j["Id"].is_string()) {
    return Internal(options_.flavor + ": commit returned no Id");
  }
  // "sha256:<hex>" from both engines (Podman's compat commit answers with the bare hex, and
  // its compat API cannot look a missing image up by a bare 64-hex id: HTTP 500, not 404).
  std::string id = j["Id"].get<std::string>();
  if (id.size() == 64 && id.find_first_not_of("0123456789abcdef") == std::string::npos) id = "sha256:" + id;
  owned_images_.push_back({repo + ":" + t, id});
  return id;
}

Status DockerExecutor::remove_owned_images() {
  // Ids compare without "sha256:", a short id as a prefix of the full one (Docker's build
  // reports the short id, Podman's commit the bare hex).
  auto bare = [](std::string s) { return s.rfind("sha256:", 0) == 0 ? s.substr(7) : s; };
  auto same = [&](const std::string& a, const std::string& b) {
    const std::string x = bare(a), y = bare(b);
    const size_t n = std::min(x.size(), y.size());
    return n >= 12 && x.compare(0, n, y, 0, n) == 0;
  };
  auto inspect = [&](const std::string& name) -> std::optional<nlohmann::json> {
    auto r = client_->send({"GET", api("/images/" + http::url_escape(name) + "/json")});
    if (!r.ok() || r->status != 200) return std::nullopt;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
  };
  std::string kept;
  std::vector<OwnedImage> still;  // kept: tried again by the next call
  for (const OwnedImage& img : owned_images_) {
    // By its tag while the tag still names this image: an image other tags also name is
    // only untagged. Otherwise (the tag was removed or moved) by id, and only when no tag
    // names the image any more.
    std::string target;
    if (auto j = inspect(img.tag); j && same(j->value("Id", ""), img.id)) {
      target = img.tag;
    } else if (auto k = inspect(img.id)) {
      const nlohmann::json tags = k->value("RepoTags", nlohmann::json::array());
      bool named = false;
      if (tags.is_array()) {
        for (const auto& t : tags) named |= t.is_string() && t.get<std::string>().find("<none>") == std::string::npos;
      }
      if (named) {
        kept += (kept.empty() ? "" : "; ") + img.tag + " " + img.id + " (now named by other tags)";
        still.push_back(img);
        continue;
      }
      target = img.id;
    } else {
      continue;  // gone already
    }
    auto r = client_->send({"DELETE", api("/images/" + http::url_escape(target))});
    if (!r.ok() || (r->status >= 300 && r->status != 404)) {
      kept += (kept.empty() ? "" : "; ") + target + " (" + (r.ok() ? http::engine_message(r->body) : r.status().message()) + ")";
      still.push_back(img);
    }
  }
  owned_images_ = std::move(still);
  if (!kept.empty()) return Status(ErrorCode::kUnsupported, options_.flavor + ": images kept: " + kept, "images");
  return Status::Ok();
}

}  // namespace corral::docker
