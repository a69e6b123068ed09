#include "backends/common/curl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace corral::http {

namespace {

template <typename F>
bool resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

Status load(CurlApi* api) {
  void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return Unsupported(std::string("libcurl.so.4 is not installed (apt-get install libcurl4): ") + (why ? why : "?"),
                       "libcurl");
  }
  // curl_global_init is not called: curl_easy_init does it, once, on first use.
  const char* missing = nullptr;
  if (!resolve(lib, "curl_easy_init", &api->easy_init)) missing = "curl_easy_init";
  else if (!resolve(lib, "curl_easy_setopt", &api->easy_setopt)) missing = "curl_easy_setopt";
  else if (!resolve(lib, "curl_easy_perform", &api->easy_perform)) missing = "curl_easy_perform";
  else if (!resolve(lib, "curl_easy_getinfo", &api->easy_getinfo)) missing = "curl_easy_getinfo";
  else if (!resolve(lib, "curl_easy_cleanup", &api->easy_cleanup)) missing = "curl_easy_cleanup";
  else if (!resolve(lib, "curl_easy_reset", &api->easy_reset)) missing = "curl_easy_reset";
  else if (!resolve(lib, "curl_easy_strerror", &api->easy_strerror)) missing = "curl_easy_strerror";
  else if (!resolve(lib, "curl_easy_send", &api->easy_send)) missing = "curl_easy_send";
  else if (!resolve(lib, "curl_easy_recv", &api->easy_recv)) missing = "curl_easy_recv";
  else if (!resolve(lib, "curl_slist_append", &api->slist_append)) missing = "curl_slist_append";
  else if (!resolve(lib, "curl_slist_free_all", &api->slist_free_all)) missing = "curl_slist_free_all";
  if (missing) return Unsupported(std::string("libcurl.so.4 lacks ") + missing + " (libcurl too old)", "libcurl");
  return Status::Ok();
}

}  // namespace

StatusOr<const CurlApi*> curl_api() {
  static CurlApi api;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] { status = load(&api); });
  if (!status.ok()) return status;
  return &api;
}

}  // namespace corral::http
