#include "src/core/json_fields.h"

#include <cmath>

namespace corral {

const char* json_type_phrase(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

JsonFields::JsonFields(const nlohmann::json& obj, std::string path)
    : obj_(obj), path_(std::move(path)) {
  if (!obj_.is_object()) {
    fail(InvalidArgument(path_.empty() ? "(top level)" : path_,
                         std::string("must be an object, got ") + json_type_phrase(obj_)));
  }
}

const nlohmann::json* JsonFields::find(const char* key) {
  seen_.insert(key);
  if (!obj_.is_object()) return nullptr;
  auto it = obj_.find(key);
  return it == obj_.end() ? nullptr : &*it;
}

const nlohmann::json* JsonFields::child(const char* key) { return find(key); }

void JsonFields::u64(const char* key, uint64_t* out, uint64_t min, uint64_t max) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string field = name(key);
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0)) {
    uint64_t n = v->get<uint64_t>();
    if (n < min) return fail(InvalidArgument(field, "must be at least " + std::to_string(min)));
    if (n > max) return fail(InvalidArgument(field, "must be at most " + std::to_string(max)));
    *out = n;
    return;
  }
  if (v->is_number_integer()) return fail(InvalidArgument(field, "must not be negative"));
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (d < 0) return fail(InvalidArgument(field, "must not be negative"));
    return fail(InvalidArgument(field, "must be a whole number"));
  }
  fail(InvalidArgument(field, std::string("must be an integer, got ") + json_type_phrase(*v)));
}

void JsonFields::number(const char* key, double* out, double min, double max) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  const std::string field = name(key);
  if (!v->is_number()) {
    return fail(InvalidArgument(field, std::string("must be a number, got ") + json_type_phrase(*v)));
  }
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    return fail(InvalidArgument(field, "must be between " + nlohmann::json(min).dump() + " and " +
                                           nlohmann::json(max).dump()));
  }
  *out = d;
}

void JsonFields::boolean(const char* key, bool* out) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  if (!v->is_boolean()) {
    return fail(InvalidArgument(name(key), std::string("must be a boolean, got ") + json_type_phrase(*v)));
  }
  *out = v->get<bool>();
}

void JsonFields::string(const char* key, std::string* out) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  if (!v->is_string()) {
    return fail(InvalidArgument(name(key), std::string("must be a string, got ") + json_type_phrase(*v)));
  }
  *out = v->get<std::string>();
  if (out->find('\0') != std::string::npos) fail(InvalidArgument(name(key), "must not contain NUL"));
}

void JsonFields::string_list(const char* key, std::vector<std::string>* out) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  if (!v->is_array()) {
    return fail(InvalidArgument(name(key), std::string("must be an array of strings, got ") +
                                               json_type_phrase(*v)));
  }
  std::vector<std::string> items;
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    std::string field = name(key) + "[" + std::to_string(i) + "]";
    if (!e.is_string()) {
      return fail(InvalidArgument(field, std::string("must be a string, got ") + json_type_phrase(e)));
    }
    items.push_back(e.get<std::string>());
    if (items.back().find('\0') != std::string::npos) return fail(InvalidArgument(field, "must not contain NUL"));
  }
  *out = std::move(items);
}

void JsonFields::string_map(const char* key, std::map<std::string, std::string>* out) {
  const nlohmann::json* v = find(key);
  if (!v) return;
  if (!v->is_object()) {
    return fail(InvalidArgument(name(key), std::string("must be an object of strings, got ") +
                                               json_type_phrase(*v)));
  }
  std::map<std::string, std::string> items;
  for (auto it = v->begin(); it != v->end(); ++it) {
    std::string field = name(key) + "." + it.key();
    if (!it.value().is_string()) {
      return fail(InvalidArgument(field, std::string("must be a string, got ") + json_type_phrase(it.value())));
    }
    items[it.key()] = it.value().get<std::string>();
  }
  *out = std::move(items);
}

Status JsonFields::finish() {
  if (!status_.ok()) return status_;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (!seen_.count(it.key())) return InvalidArgument(name(it.key()), "unknown field");
  }
  return Status::Ok();
}

}  // namespace corral
