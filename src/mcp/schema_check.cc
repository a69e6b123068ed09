#include "src/mcp/schema_check.h"

#include <cmath>

#include "src/core/json_fields.h"

namespace corral::mcp {
namespace {

bool has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    // 3.0 is an integer in JSON Schema.
    return v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>());
  }
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  if (type == "null") return v.is_null();
  return false;
}

const char* type_phrase(const std::string& type) {
  if (type == "string") return "a string";
  if (type == "integer") return "an integer";
  if (type == "number") return "a number";
  if (type == "boolean") return "a boolean";
  if (type == "array") return "an array";
  if (type == "object") return "an object";
  return "null";
}

std::string field_name(const std::string& path) { return path.empty() ? "arguments" : path; }

std::string num(double d) {
  nlohmann::json j = d;
  if (d == std::floor(d) && std::fabs(d) < 1e15) j = static_cast<int64_t>(d);
  return j.dump();
}

}  // namespace

Status check_against_schema(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path) {
  const std::string field = field_name(path);
  if (auto t = schema.find("type"); t != schema.end() && t->is_string()) {
    if (!has_type(value, *t)) {
      return InvalidArgument(field, std::string("must be ") + type_phrase(*t) + ", got " + json_type_phrase(value));
    }
  }
  if (auto e = schema.find("enum"); e != schema.end()) {
    bool found = false;
    std::string choices;
    for (const auto& option : *e) {
      found = found || option == value;
      choices += (choices.empty() ? "" : ", ") + option.dump();
    }
    if (!found) return InvalidArgument(field, "must be one of " + choices + ", got " + value.dump());
  }
  if (value.is_number()) {
    const double d = value.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && d < m->get<double>()) {
      return InvalidArgument(field, "must be at least " + num(m->get<double>()) + ", got " + value.dump());
    }
    if (auto m = schema.find("exclusiveMinimum"); m != schema.end() && d <= m->get<double>()) {
      return InvalidArgument(field, "must be greater than " + num(m->get<double>()) + ", got " + value.dump());
    }
    if (auto m = schema.find("maximum"); m != schema.end() && d > m->get<double>()) {
      return InvalidArgument(field, "must be at most " + num(m->get<double>()) + ", got " + value.dump());
    }
  }
  if (value.is_string()) {
    // Lengths in bytes: what matters here is the size of what lands in the sandbox.
    const size_t n = value.get_ref<const std::string&>().size();
    if (auto m = schema.find("minLength"); m != schema.end() && n < m->get<size_t>()) {
      return InvalidArgument(
          field, m->get<size_t>() == 1 ? "must not be empty" : "must be at least " + m->dump() + " characters long");
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && n > m->get<size_t>()) {
      return InvalidArgument(field, "must be at most " + m->dump() + " bytes long, got " + std::to_string(n));
    }
  }
  if (value.is_array()) {
    if (auto m = schema.find("maxItems"); m != schema.end() && value.size() > m->get<size_t>()) {
      return InvalidArgument(field, "must have at most " + m->dump() + " items, got " + std::to_string(value.size()));
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < value.size(); ++i) {
        RETURN_IF_ERROR(check_against_schema(value[i], *items, field_name(path) + "[" + std::to_string(i) + "]"));
      }
    }
  }
  if (value.is_object()) {
    static const nlohmann::json kNoProperties = nlohmann::json::object();
    auto props_it = schema.find("properties");
    const nlohmann::json& props = props_it != schema.end() ? *props_it : kNoProperties;
    const std::string prefix = path.empty() ? "" : path + ".";
    if (auto req = schema.find("required"); req != schema.end()) {
      for (const auto& name : *req) {
        if (!value.contains(name.get<std::string>())) {
          return InvalidArgument(prefix + name.get<std::string>(), "is required");
        }
      }
    }
    const auto extra = schema.find("additionalProperties");
    const bool closed = extra != schema.end() && extra->is_boolean() && !extra->get<bool>();
    for (const auto& [key, child] : value.items()) {
      auto p = props.find(key);
      if (p == props.end()) {
        if (!closed) continue;
        std::string known;
        for (const auto& [name, _] : props.items()) known += (known.empty() ? "" : ", ") + name;
        return InvalidArgument(prefix + key, "unknown field (known: " + (known.empty() ? "none" : known) + ")");
      }
      RETURN_IF_ERROR(check_against_schema(child, *p, prefix + key));
    }
  }
  return Status::Ok();
}

}  // namespace corral::mcp
