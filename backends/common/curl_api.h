// libcurl, loaded with dlopen("libcurl.so.4") on first use: native launches (the latency-
// critical path) never load libcurl and the two dozen libraries it depends on. Only the few
// functions the HTTP client needs are resolved.
#pragma once

#include <curl/curl.h>

#include "src/core/status.h"

namespace corral::http {

struct CurlApi {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  CURLcode (*easy_send)(CURL*, const void*, size_t, size_t*);
  CURLcode (*easy_recv)(CURL*, void*, size_t, size_t*);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The resolved functions (loaded once, thread-safe); kUnsupported naming libcurl.so.4 when the
// library is not installed or lacks a function.
StatusOr<const CurlApi*> curl_api();

}  // namespace corral::http
