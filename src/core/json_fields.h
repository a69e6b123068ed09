// Strict reading of JSON objects into C++ fields. Each reader knows the dotted path of the
// object it reads ("limits", "mounts[2]"), so an error can name the exact field, and it
// rejects keys nobody asked for. Used by every JSON edge (policy, seccomp profiles, HTTP).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral {

class JsonFields {
 public:
  // `path` is the dotted name of `obj` itself; empty for the top level.
  JsonFields(const nlohmann::json& obj, std::string path);

  // Each getter leaves `out` untouched when the key is absent. The first error sticks.
  void u64(const char* key, uint64_t* out, uint64_t min, uint64_t max);
  void number(const char* key, double* out, double min, double max);
  void boolean(const char* key, bool* out);
  void string(const char* key, std::string* out);
  void string_list(const char* key, std::vector<std::string>* out);
  void string_map(const char* key, std::map<std::string, std::string>* out);
  // Returns the child value (null when absent) and marks the key as known.
  const nlohmann::json* child(const char* key);

  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  void fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  // Call last: reports the first error, else any key that no getter asked for.
  Status finish();

 private:
  const nlohmann::json* find(const char* key);

  const nlohmann::json& obj_;
  std::string path_;
  std::set<std::string> seen_;
  Status status_;
};

// The JSON type name used in error messages ("a string", "an object", ...).
const char* json_type_phrase(const nlohmann::json& v);

}  // namespace corral
