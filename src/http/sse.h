// Server-Sent Events: how a run streams its output. Events are "stdout" and "stderr"
// ({"data": text} as it arrives), then exactly one "result" (the ExecResult JSON) or
// "error" ({"error":{code,message,field}}). Every data line is one JSON value, so no
// payload can forge an event boundary.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace corral::http {

// "event: <name>\ndata: <json>\n\n", invalid UTF-8 replaced.
std::string sse_event(std::string_view name, const nlohmann::json& data);

// Whether the client asked for an event stream (Accept lists text/event-stream).
bool accepts_event_stream(const std::string& accept);

}  // namespace corral::http
