// Strict checking of tool arguments against the tool's own inputSchema, so what a client is
// told (tools/list) and what the server accepts cannot drift apart. Understands the subset
// corral's schemas use: type, properties, required, additionalProperties:false, items, enum,
// minimum, maximum, exclusiveMinimum, minLength, maxLength, maxItems.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "src/core/status.h"

namespace corral::mcp {

// kInvalidArgument naming the first offending field ("code", "libraries[1]") with what was
// wrong; unknown fields are named too.
Status check_against_schema(const nlohmann::json& value, const nlohmann::json& schema,
                            const std::string& path = {});

}  // namespace corral::mcp
